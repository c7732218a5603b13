import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Env, Hono } from 'hono';
import type { Site } from './html.js';

// Swagger UI's files come from the npm package: the service never loads anything from a CDN.
// The package folder, found without loading the package (its index loads the whole bundle).
const require = createRequire(import.meta.url);
const ASSET_DIR = dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};
const cache = new Map<string, Buffer>();

const page = (site: Site) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Research-Intensity API reference</title>
  <link rel="stylesheet" href="/assets/site.css">
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" href="/docs/assets/favicon-32x32.png">
</head>
<body>
${site.header}
  <div id="reference">
    <h1>Research-Intensity API reference</h1>
    <p>The reference is drawn from <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.0.3) once its script has loaded.</p>
  </div>
  <script defer src="/docs/assets/swagger-ui-bundle.js"></script>
  <script defer src="/docs/assets/init.js"></script>
</body>
</html>`;

// A file, not an inline script, so the pages' Content-Security-Policy needs no 'unsafe-inline'.
const INIT =
  "window.ui = SwaggerUIBundle({ url: '/v1/openapi.json', dom_id: '#reference', deepLinking: true });\n";

/** The API reference page at /docs, rendered by Swagger UI from /v1/openapi.json. */
export function registerDocs<E extends Env>(app: Hono<E>, site: Site): void {
  const text = page(site);
  app.get('/docs', (c) => c.html(text));
  app.get('/docs/assets/:file', (c) => {
    const file = c.req.param('file');
    if (file === 'init.js')
      return c.body(INIT, 200, {
        'content-type': 'text/javascript; charset=utf-8',
        'cache-control': 'public, max-age=86400',
      });
    const type = ASSETS[file];
    if (!type) return c.notFound();
    let body = cache.get(file);
    if (!body) {
      body = readFileSync(join(ASSET_DIR, file));
      cache.set(file, body);
    }
    return c.body(new Uint8Array(body), 200, {
      'content-type': type,
      'cache-control': 'public, max-age=86400',
    });
  });
}

import type { Hono } from 'hono';
import { SERVICE_VERSION } from '../../../config/paths.js';
import { PinnedQuery } from '../../../contracts/params.js';
import { envelope } from '../../../core/viewer.js';
import type { AppEnv } from '../../context.js';
import { viewerOf } from '../../guard.js';
import { type RouteDeps, strictQuery } from '../shared.js';

/**
 * GET /v1: the API's root, the base address the OpenAPI document (`servers`) and the agent skill
 * print. It answers with where everything is, rather than a 404 at the one address every client
 * starts from. Free and keyless, through the /v1 middleware as any read (a key is checked, the call
 * counted), kept by the response cache per snapshot since it names the data version served.
 * With canonical_url, notes and data_version, as every successful answer.
 */
export function registerApiRoot(app: Hono<AppEnv>, deps: Pick<RouteDeps, 'publicUrl' | 'edition'>): void {
  const base = deps.publicUrl;
  app.get('/v1', strictQuery(PinnedQuery), (c) => {
    // As every answer: the page to cite (the API's reference), the metrics' notes for this caller
    // and data, and the data version.
    const { canonical_url, notes, data_version } = envelope(
      c.get('snapshot'),
      viewerOf(c, deps.edition, base),
      '/docs',
    );
    return c.json(
      {
        name: 'Research-Intensity API',
        service_version: SERVICE_VERSION,
        edition: deps.edition,
        data_version,
        openapi_url: `${base}/v1/openapi.json`,
        docs_url: `${base}/docs`,
        elements_url: `${base}/v1/elements`,
        versions_url: `${base}/v1/versions`,
        mcp_url: `${base}/mcp`,
        skill_url: `${base}/v1/skill`,
        pricing_url: `${base}/pricing`,
        account_url: `${base}/account`,
        canonical_url,
        notes,
      },
      200,
      { 'cache-control': 'public, max-age=60' },
    );
  });
}

import type { Env, Hono } from 'hono';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';
import { esc } from './html.js';

/** The site's icon: the letters RI on the accent colour (SVG: one small file for every size). */
const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b5cad"/><text x="16" y="22" font-family="system-ui,sans-serif" font-size="15" font-weight="700" fill="#fff" text-anchor="middle">RI</text></svg>';

/** Most sitemap readers take at most 50,000 URLs per file; the pages beyond are reached by links. */
const SITEMAP_MAX = 50_000;

/**
 * The files a browser or a crawler asks a site for: /favicon.svg (and /favicon.ico, the path
 * browsers ask without a link), /robots.txt (the pages crawlable, the API and the account not;
 * research and the lab, answers to any question, not either, where this edition has them)
 * and /sitemap.xml (the table, each element's page and each topic's page of the current data).
 */
export function registerSiteFiles<E extends Env>(
  app: Hono<E>,
  deps: { publicUrl: string; snapshots: SnapshotManager; edition: 'full' | 'enterprise' },
): void {
  const icon = { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' };
  app.get('/favicon.svg', (c) => c.body(FAVICON_SVG, 200, icon));
  app.get('/favicon.ico', (c) => c.body(FAVICON_SVG, 200, icon));
  app.get('/robots.txt', (c) =>
    c.body(
      `User-agent: *\nAllow: /\nDisallow: /v1/\nDisallow: /mcp\nDisallow: /account\nDisallow: /pricing/request\n${deps.edition === 'full' ? 'Disallow: /research\nDisallow: /lab\n' : ''}\nSitemap: ${deps.publicUrl}/sitemap.xml\n`,
      200,
      { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'public, max-age=3600' },
    ),
  );
  app.get('/sitemap.xml', (c) => {
    const snapshot = deps.snapshots.acquire();
    try {
      const xml = snapshot
        ? snapshot.memoize('web:sitemap', () => sitemap(deps.publicUrl, snapshot))
        : sitemapOf([`${deps.publicUrl}/`, `${deps.publicUrl}/pricing`, `${deps.publicUrl}/docs`]);
      return c.body(xml, 200, {
        'content-type': 'application/xml; charset=utf-8',
        'cache-control': 'public, max-age=3600',
      });
    } finally {
      snapshot?.release();
    }
  });
}

function sitemap(publicUrl: string, snapshot: Snapshot): string {
  const urls = [`${publicUrl}/`, `${publicUrl}/pricing`, `${publicUrl}/docs`];
  for (const e of snapshot.reader.elementRows()) urls.push(`${publicUrl}/elements/${e.id}`);
  // Topics with the most papers first, so that a cut keeps the ones most asked for.
  if (snapshot.reader.hasLabTables())
    for (const s of snapshot.reader.labSubjects())
      if (s.type === 'topic') urls.push(`${publicUrl}/subjects/topic/${encodeURIComponent(s.id)}`);
  return sitemapOf(urls.slice(0, SITEMAP_MAX));
}

function sitemapOf(urls: string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map((u) => `<url><loc>${esc(u)}</loc></url>`).join('\n')}\n</urlset>\n`;
}

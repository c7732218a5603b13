import type { Context } from 'hono';
import type { Site } from './html.js';

/** The API's and the service's own addresses: a path under them is never a page, whoever asks. */
const NOT_PAGES = /^\/(?:v1|mcp|metrics|healthz|readyz|\.well-known)(?:\/|$)/;

/**
 * Whether a path no route answers should get the site's not-found page rather than a problem: a
 * browser's request (it accepts text/html) for a path outside the API and the service's own
 * addresses. API clients, and every request under /v1, /mcp and the rest, keep the problem+json.
 */
export function wantsNotFoundPage(c: Context): boolean {
  return !NOT_PAGES.test(c.req.path) && (c.req.header('accept') ?? '').includes('text/html');
}

/** The not-found page, as an unknown element's: 404, a link home. Not cached: the answer varies by Accept. */
export function notFoundPage(c: Context, site: Site): Response {
  return c.html(site.errorPage('Not found', `There is no page at ${c.req.path}.`), 404, {
    'cache-control': 'no-store',
    vary: 'Accept',
  });
}

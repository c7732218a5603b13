import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ServiceError } from '../core/errors.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';
import { html, page } from './html.js';

/**
 * Renders a page over the snapshot current when the request began (released when the page is
 * done): 503 while none is published, and a user's mistake (an unknown symbol or subject, a bad
 * question) as an HTML page with its status, never a 500.
 */
export async function withSnapshot(
  // biome-ignore lint/suspicious/noExplicitAny: any route's context, whatever its path parameters
  c: Context<any, any, any>,
  snapshots: SnapshotManager,
  render: (snapshot: Snapshot) => Response | Promise<Response>,
  errorHeaders: Record<string, string> = {},
): Promise<Response> {
  const snapshot = snapshots.acquire();
  if (!snapshot)
    return c.html(
      page('Data unavailable', html`<h1>Data unavailable</h1><p>${snapshots.unavailable()}</p>`),
      503,
      { 'retry-after': '5' },
    );
  try {
    return await render(snapshot);
  } catch (e) {
    if (e instanceof ServiceError && e.status < 500)
      return c.html(
        errorPage(e.status === 404 ? 'Not found' : 'Cannot show this', e.detail),
        e.status as ContentfulStatusCode,
        errorHeaders,
      );
    throw e;
  } finally {
    snapshot.release();
  }
}

/** A reader's mistake as a page: what went wrong, and the way home. */
export function errorPage(title: string, detail: string): string {
  return page(title, html`<h1>${title}</h1><p>${detail}</p><p><a href="/">The periodic table</a></p>`);
}

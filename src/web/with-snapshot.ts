import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ServiceError } from '../core/errors.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';
import { html, type Site } from './html.js';

/**
 * Renders a page over the snapshot current when the request began (released when the page is
 * done): 503 while none is published, and a user's mistake (an unknown symbol or subject, a bad
 * question) as an HTML page with its status, never a 500.
 */
export async function withSnapshot(
  // biome-ignore lint/suspicious/noExplicitAny: any route's context, whatever its path parameters
  c: Context<any, any, any>,
  site: Site,
  snapshots: SnapshotManager,
  render: (snapshot: Snapshot) => Response | Promise<Response>,
  errorHeaders: Record<string, string> = {},
): Promise<Response> {
  const snapshot = snapshots.acquire();
  if (!snapshot)
    return c.html(
      site.page('Data unavailable', html`<h1>Data unavailable</h1><p>${snapshots.unavailable()}</p>`),
      503,
      { 'retry-after': '5' },
    );
  try {
    return await render(snapshot);
  } catch (e) {
    if (e instanceof ServiceError && e.status < 500)
      return c.html(
        site.errorPage(e.status === 404 ? 'Not found' : 'Cannot show this', e.detail),
        e.status as ContentfulStatusCode,
        errorHeaders,
      );
    throw e;
  } finally {
    snapshot.release();
  }
}

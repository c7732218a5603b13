import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ServiceError } from '../core/errors.js';
import { isCorruption, type Snapshot, type SnapshotManager } from '../snapshot/snapshot.js';
import { html, type Site } from './html.js';

/**
 * Renders a page over the snapshot current when the request began (released when the page is
 * done): 503 while none is published, and a user's mistake (an unknown symbol or subject, a bad
 * question) as an HTML page with its status, never a 500. A damaged page of the file met while
 * rendering is a 503 and the file is checked at once; a page rendered from a snapshot set aside
 * meanwhile is not sent (a 503), as the API answers.
 */
export async function withSnapshot(
  // biome-ignore lint/suspicious/noExplicitAny: any route's context, whatever its path parameters
  c: Context<any, any, any>,
  site: Site,
  snapshots: SnapshotManager,
  render: (snapshot: Snapshot) => Response | Promise<Response>,
  errorHeaders: Record<string, string> = {},
): Promise<Response> {
  const unavailable = (why: string) =>
    c.html(site.page('Data unavailable', html`<h1>Data unavailable</h1><p>${why}</p>`), 503, {
      'retry-after': '5',
    });
  const snapshot = snapshots.acquire();
  if (!snapshot) return unavailable(snapshots.unavailable());
  try {
    const rendered = await render(snapshot);
    return snapshot.isSetAside ? unavailable(SET_ASIDE) : rendered;
  } catch (e) {
    if (isCorruption(e)) {
      void snapshots.suspect(snapshot, e);
      return unavailable(SET_ASIDE);
    }
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

const SET_ASIDE = 'The data snapshot could not be read and is being checked or replaced; try again shortly.';

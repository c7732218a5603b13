import { createHash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { takeAnswerHeaders } from './answer-headers.js';
import type { AppEnv } from './context.js';
import { prefersCsv } from './csv.js';

/**
 * Every answer is a pure function of (snapshot, URL, caller's plan), so a successful GET is kept,
 * serialised, per snapshot: repeated calls skip the handler and JSON.stringify. The cache sits
 * after authentication and rate limiting (every request is still authenticated and counted) and
 * its key holds the plan, so a hit can only repeat an answer the same plan was already given.
 * Also sets ETag, Cache-Control and Vary, and answers If-None-Match with 304.
 */
interface Entry {
  body: string;
  etag: string;
  /** Every header of a hit, prepared once. */
  headers: Record<string, string>;
}

/** The whole cache of one snapshot holds at most this many bytes of bodies (oldest entries go first). */
const MAX_BYTES = 64 * 1024 * 1024;
const MAX_BODY = 512 * 1024;

/** The bodies of one snapshot's cache, in insertion order, with their total size. */
interface Store {
  entries: Map<string, Entry>;
  bytes: number;
}

export function responseCache(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // Paid calls are never answered from the cache: each is verified and settled on its own.
    if (c.req.method !== 'GET' || c.get('payment')) return next();
    const snapshot = c.get('snapshot');
    const plan = c.get('caller')?.plan ?? 'anonymous';
    // Path and query only: the Host header (or any other header) is not part of an answer, and
    // keying on it let one client fill memory with copies of the same answer.
    const url = c.req.url;
    // The representation too: a route that answers CSV to Accept: text/csv keeps both forms apart.
    const form = prefersCsv(c.req.header('accept')) ? 'csv|' : '';
    const key = `${plan}|${form}${url.slice(url.indexOf('/', url.indexOf('//') + 2))}`;
    const store = snapshot.memoize('response-cache', (): Store => ({ entries: new Map(), bytes: 0 }));
    const cache = store.entries;
    let entry = cache.get(key);
    if (!entry) {
      await next();
      // A route that answers no-store (a lab quote carries its own expiry) is never kept.
      if (c.res.status !== 200 || c.res.headers.get('cache-control') === 'no-store') return;
      const body = await c.res.clone().text();
      const etag = `W/"${createHash('sha1').update(`${snapshot.version}|${key}`).digest('base64url').slice(0, 22)}"`;
      entry = {
        body,
        etag,
        headers: cacheHeaders(
          c.res.headers.get('content-type') ?? 'application/json',
          etag,
          plan !== 'anonymous',
          c.res.headers,
        ),
      };
      if (body.length <= MAX_BODY && !cache.has(key)) {
        for (const [oldKey, old] of cache) {
          if (store.bytes + body.length <= MAX_BYTES) break;
          cache.delete(oldKey);
          store.bytes -= old.body.length;
        }
        cache.set(key, entry);
        store.bytes += body.length;
      }
      for (const [name, value] of Object.entries(entry.headers)) c.res.headers.set(name, value);
      if (notModified(c, entry.etag)) c.res = new Response(null, { status: 304, headers: c.res.headers });
      return;
    }
    // A hit: the stored body with every header at once (headers set on a finished response
    // would make @hono/node-server rebuild it as a stream), in a plain object with the headers
    // every answer carries, so @hono/node-server writes them as they are (answer-headers.ts).
    const fresh = notModified(c, entry.etag);
    const headers = takeAnswerHeaders(c, entry.headers);
    if (headers) return new Response(fresh ? null : entry.body, { status: fresh ? 304 : 200, headers });
    return fresh ? c.body(null, 304, entry.headers) : c.body(entry.body, 200, entry.headers);
  };
}

function cacheHeaders(
  contentType: string,
  etag: string,
  keyed: boolean,
  route: Headers,
): Record<string, string> {
  const byAccept =
    route
      .get('vary')
      ?.split(',')
      .some((h) => h.trim().toLowerCase() === 'accept') ?? false;
  // A CSV answer carries its envelope in headers (csv.ts): a hit repeats them.
  const envelope: Record<string, string> = {};
  for (const name of ['link', 'ri-data-version']) {
    const value = route.get(name);
    if (value !== null) envelope[name] = value;
  }
  return {
    'content-type': contentType,
    etag,
    'cache-control': keyed ? 'private, max-age=300' : 'public, max-age=300',
    vary: byAccept ? 'Authorization, Accept, Accept-Encoding' : 'Authorization, Accept-Encoding',
    ...envelope,
  };
}

function notModified(c: Context<AppEnv>, etag: string): boolean {
  const inm = c.req.header('if-none-match');
  return inm?.split(',').some((t) => t.trim() === etag || t.trim() === '*') ?? false;
}

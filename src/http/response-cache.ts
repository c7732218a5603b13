import { createHash } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from './context.js';

/**
 * Every answer is a pure function of (snapshot, URL, caller's plan), so a successful GET is kept,
 * serialised, per snapshot: repeated calls skip the handler and JSON.stringify. The cache sits
 * after authentication and rate limiting (every request is still authenticated and counted) and
 * its key holds the plan, so a hit can only repeat an answer the same plan was already given.
 * Also sets ETag, Cache-Control and Vary, and answers If-None-Match with 304.
 */
interface Entry {
  body: string;
  contentType: string;
  etag: string;
}

const MAX_ENTRIES = 5_000;
const MAX_BODY = 512 * 1024;

export function responseCache(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method !== 'GET') return next();
    const snapshot = c.get('snapshot');
    const plan = c.get('caller')?.plan ?? 'anonymous';
    const key = `${plan}|${c.req.url}`;
    const cache = snapshot.memoize('response-cache', () => new Map<string, Entry>());
    let entry = cache.get(key);
    if (!entry) {
      await next();
      if (c.res.status !== 200) return;
      const body = await c.res.clone().text();
      entry = {
        body,
        contentType: c.res.headers.get('content-type') ?? 'application/json',
        etag: `W/"${createHash('sha1').update(`${snapshot.version}|${key}`).digest('base64url').slice(0, 22)}"`,
      };
      if (body.length <= MAX_BODY) {
        if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
        cache.set(key, entry);
      }
      setCacheHeaders(c.res.headers, entry.etag, plan !== 'anonymous');
      if (notModified(c, entry.etag)) c.res = new Response(null, { status: 304, headers: c.res.headers });
      return;
    }
    // A hit: the stored body with every header at once (headers set on a finished response
    // would make @hono/node-server rebuild it as a stream).
    const headers = new Headers({ 'content-type': entry.contentType });
    setCacheHeaders(headers, entry.etag, plan !== 'anonymous');
    if (notModified(c, entry.etag)) return c.body(null, 304, Object.fromEntries(headers));
    return c.body(entry.body, 200, Object.fromEntries(headers));
  };
}

function setCacheHeaders(headers: Headers, etag: string, keyed: boolean): void {
  headers.set('ETag', etag);
  headers.set('Cache-Control', keyed ? 'private, max-age=300' : 'public, max-age=300');
  headers.set('Vary', 'Authorization, Accept-Encoding');
}

function notModified(c: Context<AppEnv>, etag: string): boolean {
  const inm = c.req.header('if-none-match');
  return inm !== undefined && inm.split(',').some((t) => t.trim() === etag || t.trim() === '*');
}

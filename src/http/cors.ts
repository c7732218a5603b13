import type { Context } from 'hono';
import { addResponseHeaders } from './fast-path/response-headers.js';
import type { Middleware } from './middleware.js';

const EXPOSE = [
  'ETag',
  // A CSV answer's envelope: its canonical_url and data_version (csv.ts).
  'Link',
  'RI-Data-Version',
  'X-Request-Id',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  // An export file's, for a ranged reader in a browser (DuckDB-Wasm reads the size from them).
  'Accept-Ranges',
  'Content-Range',
  'Content-Disposition',
];
/** x402's headers are exposed only by a server that takes per-call payments. */
const EXPOSE_PAYMENTS = [...EXPOSE, 'PAYMENT-REQUIRED', 'PAYMENT-RESPONSE'].join(', ');

/**
 * CORS for a public read-only API: any origin, GET and POST, preflight answered here. Right after
 * the request id, whose collection of headers (fast-path/response-headers.ts) carries these onto
 * every response. Not hono/cors: it writes to c.res before the handler, which makes
 * @hono/node-server rebuild every response as a stream (a quarter of the throughput).
 */
export function cors(payments = false): Middleware {
  const expose = payments ? EXPOSE_PAYMENTS : EXPOSE.join(', ');
  return {
    enter(c: Context) {
      if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) {
        return c.body(null, 204, {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'GET, POST, OPTIONS',
          'access-control-allow-headers':
            c.req.header('access-control-request-headers') ?? 'authorization, content-type',
          'access-control-max-age': '86400',
          vary: 'Access-Control-Request-Headers',
        });
      }
      addResponseHeaders(c, { 'access-control-allow-origin': '*', 'access-control-expose-headers': expose });
      return undefined;
    },
  };
}

import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import type { Middleware } from './fast-path/middleware-chain.js';
import { applyResponseHeaders, startResponseHeaders } from './fast-path/response-headers.js';

const EXPOSE = [
  'ETag',
  'X-Request-Id',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
];
/** x402's headers are exposed only by a server that takes per-call payments. */
const EXPOSE_PAYMENTS = [...EXPOSE, 'PAYMENT-REQUIRED', 'PAYMENT-RESPONSE'].join(', ');

/**
 * The request id (taken from X-Request-Id or made) and CORS for a public read-only API: any origin,
 * GET and POST, preflight answered here. The first middleware: it opens the collection of headers
 * every answer carries (fast-path/response-headers.ts) and puts them on the answer at the end. Not hono/cors: it
 * writes to c.res before the handler, which makes @hono/node-server rebuild every response as a
 * stream (a quarter of the throughput).
 */
export function cors(
  payments = false,
  publicUrl = '',
): Middleware<Context<{ Variables: { requestId: string; publicUrl: string } }>> {
  const expose = payments ? EXPOSE_PAYMENTS : EXPOSE.join(', ');
  return {
    enter(c) {
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
      const requestId = c.req.header('x-request-id')?.slice(0, 100) || randomUUID();
      c.set('requestId', requestId);
      c.set('publicUrl', publicUrl);
      startResponseHeaders(c, {
        'x-request-id': requestId,
        'access-control-allow-origin': '*',
        'access-control-expose-headers': expose,
      });
      return undefined;
    },
    exit: applyResponseHeaders,
  };
}

import { randomUUID } from 'node:crypto';
import type { Context } from 'hono';
import { applyResponseHeaders, startResponseHeaders } from './fast-path/response-headers.js';
import type { Middleware } from './middleware.js';

/**
 * The first middleware: the request id (the client's X-Request-Id, cut to 100 characters, or a
 * new one), which every response, log line and problem carries, and the public URL problems link
 * to. It opens the collection of headers every response carries (fast-path/response-headers.ts)
 * and puts them on the response at the end.
 */
export function requestId(
  publicUrl = '',
): Middleware<Context<{ Variables: { requestId: string; publicUrl: string } }>> {
  return {
    enter(c) {
      const id = c.req.header('x-request-id')?.slice(0, 100) || randomUUID();
      c.set('requestId', id);
      c.set('publicUrl', publicUrl);
      startResponseHeaders(c, { 'x-request-id': id });
      return undefined;
    },
    exit: applyResponseHeaders,
  };
}

import type { Context } from 'hono';
import { markPrecompressed } from './compression.js';
import { serverTiming, type Timing } from './server-timing.js';

/**
 * Headers that every answer to a request carries whatever produced it (request id, CORS, rate
 * limit), collected as a plain object instead of being set with c.header().
 *
 * Why: c.header() before the handler makes Hono build a WHATWG Headers object for the answer, and
 * @hono/node-server then validates, sorts and copies every header of it on every request; with a
 * plain object it hands the headers to Node's writeHead as they are. For an answer served from
 * the response cache that was most of the CPU time the service spent above a bare route.
 *
 * How: the first middleware (request-id.ts) opens the collection with startResponseHeaders().
 * Later middleware adds to it with addResponseHeaders(). A cached answer takes the collection into
 * its own plain header object at once (takeResponseHeaders()); any other answer (handlers, errors,
 * 404s) gets the headers it does not set itself at the end, from the first middleware's exit
 * (applyResponseHeaders()).
 * Either way the answer carries the same headers as with c.header(), and the answer's own headers
 * win over collected ones of the same name, as before.
 *
 * The collection also times the request: every answer carries Server-Timing (server-timing.ts).
 *
 * Names are lower-case, as Headers would have made them.
 */
export interface ResponseHeaders extends Timing {
  values: Record<string, string>;
  /** True once an answer has taken the values into its own headers. */
  taken: boolean;
}

const VAR = 'answerHeaders';
type WithResponseHeaders = { Variables: { [VAR]?: ResponseHeaders } };

export function startResponseHeaders(c: Context, values: Record<string, string>): ResponseHeaders {
  const collected: ResponseHeaders = { values, taken: false, start: performance.now() };
  (c as Context<WithResponseHeaders>).set(VAR, collected);
  return collected;
}

/** Adds headers to every answer of this request; without the first middleware, c.header(). */
export function addResponseHeaders(c: Context, headers: Record<string, string>): void {
  const collected = (c as Context<WithResponseHeaders>).get(VAR);
  if (collected && !collected.taken) {
    Object.assign(collected.values, headers);
    return;
  }
  for (const name in headers) c.header(name, headers[name]);
}

/** The handler's time, for Server-Timing's `core`. */
export function recordCoreTime(c: Context, ms: number): void {
  const collected = (c as Context<WithResponseHeaders>).get(VAR);
  if (collected) collected.core = ms;
}

/**
 * The collected headers merged under `own` (own wins), with Server-Timing (`hit`: from the
 * response cache), for an answer built here with a plain header object; null when nothing was
 * collected (then answer through c.body(), which includes whatever c.header() set).
 */
export function takeResponseHeaders(
  c: Context,
  own: Record<string, string>,
  hit = false,
): Record<string, string> | null {
  const collected = (c as Context<WithResponseHeaders>).get(VAR);
  if (!collected || collected.taken) return null;
  collected.taken = true;
  // Into the request's own object: object spread here costs microseconds, Object.assign does not.
  const headers = Object.assign(collected.values, own);
  headers['server-timing'] = serverTiming(collected, hit);
  return headers;
}

/** Sets the collected headers the answer does not carry yet (unless a cached answer took them). */
export function applyResponseHeaders(c: Context): void {
  const collected = (c as Context<WithResponseHeaders>).get(VAR);
  if (!collected || collected.taken) return;
  collected.taken = true;
  const headers = c.res.headers;
  for (const name in collected.values) if (!headers.has(name)) headers.set(name, collected.values[name]!);
  headers.set('server-timing', serverTiming(collected, false));
}

/**
 * A 200 of ready bytes (already encoded, with their own headers) sent with the collected headers
 * in one plain object, as a response-cache hit is; compression leaves it alone (MCP's cached answers).
 */
export function readyResponse(
  c: Context,
  own: Record<string, string>,
  body: ConstructorParameters<typeof Response>[0],
): Response {
  markPrecompressed(c);
  return new Response(body, { status: 200, headers: takeResponseHeaders(c, own, true) ?? own });
}

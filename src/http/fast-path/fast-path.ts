/**
 * The fast path: the HTTP layer's performance code, fenced in this folder.
 *
 * Contract:
 * - It changes no answer. A request served here gets the same status, bytes and headers as the
 *   same request through Hono (test/integration/http/fast-path.test.ts, test/integration/http/cached-reads-listener.test.ts).
 * - Only the node listener (`serviceListener`, http/server.ts) calls `fastPath()`; the app
 *   (http/request-middleware.ts) builds the middleware chain (http/middleware.ts) whose
 *   `.fastPath` it runs, and the two hand requests over through `handoff.ts`. The rest of http
 *   uses the header collector and compression's helpers; nothing outside src/http imports this
 *   folder.
 * - It answers only a GET under /v1 with a plain URL that ends in a response made for it (a
 *   response-cache hit, a kept unpaid 402). At the first miss, error or any other response it
 *   hands the request to Hono, whose middleware chain resumes after the last middleware run here.
 * - Its answers are written at the end of the event loop's turn, all together (ResponseBatch); one
 *   whose snapshot was set aside meanwhile is the 503 any other request holding it gets.
 *
 * What is here: `fast-path.ts` (this listener and its small request context), `handoff.ts` (what
 * it and the app's middleware chain, which both paths run, hand each other),
 * `response-headers.ts` (the headers every response carries, collected as a plain object),
 * `server-timing.ts`, `compression.ts`, `response-cache.ts`, `unpaid-cache.ts` (a priced URL's
 * 402, kept ready) and `histogram.ts` (the request-duration histogram of /metrics, cheaper than
 * prom-client's).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getPath, getQueryParam } from 'hono/utils/url';
import { setAsideRefusal } from '../../calls/set-aside.js';
import { ServiceError } from '../../core/errors.js';
import type { Snapshot } from '../../snapshot/snapshot.js';
import { problemBody } from '../problem.js';
import type { FastPathResponse, FastPathRun } from './handoff.js';

/**
 * GET requests under /v1 are first run through the app's middleware (../middleware.ts) on a
 * small context of its own, before Hono builds its context and @hono/node-server its Request and
 * Response objects. When the middleware ends in a response made for it (the response cache's), it
 * writes that response to Node with the other answers of the loop's turn (ResponseBatch);
 * otherwise (a miss, an error) it hands the request on to the Hono app, whose first middleware
 * carries on from where the fast path stopped, so no middleware runs twice.
 *
 * Why: for a cached answer, building those objects, routing and awaiting were about a third of
 * the CPU time of a request (profiled), for an answer that is ready bytes.
 *
 * Only requests whose URL @hono/node-server takes as it is (a plain Host and a plain path: no
 * percent-escape, no dot segment) come through here, so the URL, path and headers the middleware
 * reads are the very ones the Hono context would give it.
 */
export function fastPath(
  run: FastPathRun,
  hono: (incoming: IncomingMessage, outgoing: ServerResponse) => unknown,
  batch: ResponseBatch = new ResponseBatch(),
): (incoming: IncomingMessage, outgoing: ServerResponse) => void {
  const onward = (incoming: IncomingMessage, outgoing: ServerResponse) => {
    // The answers ready so far are not held behind work the fast path does not know the length of.
    batch.flush();
    void hono(incoming, outgoing);
  };
  return (incoming, outgoing) => {
    const c = admit(incoming, outgoing);
    if (!c) return onward(incoming, outgoing);
    let answer: ReturnType<FastPathRun>;
    try {
      answer = run(c);
    } catch (error) {
      return failed(c, error);
    }
    if (answer instanceof Promise)
      answer.then(
        (a) => (a ? batch.add(c, a) : onward(incoming, outgoing)),
        (error: unknown) => failed(c, error),
      );
    else if (answer) batch.add(c, answer);
    else onward(incoming, outgoing);
  };
}

/**
 * The answers the fast path makes during one turn of the event loop, written together at its end
 * (by default setImmediate: right after the poll phase that read their requests), in the order
 * they were made.
 *
 * Why: a client on the same machine (nginx in front of the replicas, a load generator) that is
 * asleep when an answer arrives is woken by it, and this process pays for the waking in its own
 * system time. Written one by one, each cached answer came a few microseconds after the last,
 * once the client had gone back to sleep, and woke it again; written together, one wake-up serves
 * the turn. Measured with `npm run bench:http-ab`: about 30% less CPU per cached read, and a
 * lower p99 under load. An answer waits at most for the rest of its turn's requests to be read:
 * a request handed on to Hono first writes the answers held, so none waits for a handler.
 */
export class ResponseBatch {
  private queued: { c: FastPathContext; answer: FastPathResponse }[] = [];

  constructor(private readonly schedule: (flush: () => void) => void = setImmediate) {}

  /** Holds an answer; the first one held since the last flush asks for a flush at the end of the turn. */
  add(c: FastPathContext, answer: FastPathResponse): void {
    if (this.queued.push({ c, answer }) === 1) this.schedule(this.flush);
  }

  /** Writes the answers held (at the end of the turn, or before other work of the turn). */
  readonly flush = (): void => {
    if (this.queued.length === 0) return;
    const queued = this.queued;
    this.queued = [];
    // One answer that cannot be written (its client gone mid-write) fails alone.
    for (const { c, answer } of queued)
      try {
        // Its snapshot set aside since the answer was made, earlier in this turn: not sent.
        const setAside = setAsideRefusal(c.get('snapshot') as Snapshot | undefined);
        if (setAside) problem(c, setAside);
        else write(c.env.outgoing, answer);
      } catch (error) {
        failed(c, error);
      }
  };
}

/** As @hono/node-server's request URL checks: a Host and a request target it uses unchanged. */
const VALID_HOST = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/;
const VALID_TARGET = /^\/[!$&-;=?-[\]_a-z~]*$/;
const DOT_SEGMENT = /\/\.\.?(?:[/?#]|$)/;
/** Header values that make @hono/node-server fall back to a WHATWG Headers object. */
const FORBIDDEN_VALUE = /[\0\r\n]/;

function admit(incoming: IncomingMessage, outgoing: ServerResponse): FastPathContext | null {
  if (incoming.method !== 'GET') return null;
  const target = incoming.url ?? '';
  if (!target.startsWith('/v1/') || !VALID_TARGET.test(target) || DOT_SEGMENT.test(target)) return null;
  const host = incoming.headers.host;
  if (!host || !VALID_HOST.test(host)) return null;
  const raw = incoming.rawHeaders;
  for (let i = 1; i < raw.length; i += 2) if (FORBIDDEN_VALUE.test(raw[i]!)) return null;
  const scheme = (incoming.socket as { encrypted?: boolean } | null)?.encrypted ? 'https' : 'http';
  return new FastPathContext(incoming, outgoing, `${scheme}://${host}${target}`);
}

/**
 * What the middleware uses of a Hono context, for a GET: the request (method, URL, path, headers,
 * query), variables, the response, and env.incoming (the socket's address). Nothing else: a
 * middleware that needs more would fail the request, which the fast path's tests would show.
 */
export class FastPathContext {
  readonly req: FastPathRequest;
  readonly env: { incoming: IncomingMessage; outgoing: ServerResponse };
  readonly vars = new Map<string, unknown>();
  res: Response | undefined = undefined;
  error: unknown = undefined;
  readonly finalized = false;
  /** The route pattern of the answer (the response cache keeps it with each entry), for metrics and logs. */
  route: string | undefined = undefined;

  constructor(incoming: IncomingMessage, outgoing: ServerResponse, url: string) {
    this.req = new FastPathRequest(incoming, url);
    this.env = { incoming, outgoing };
  }

  get(name: string): unknown {
    return this.vars.get(name);
  }

  set(name: string, value: unknown): void {
    this.vars.set(name, value);
  }
}

/** The headers @hono/node-server reads from the request's raw lines rather than Node's joined object. */
const NON_JOINED = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
  'set-cookie',
  '__proto__',
]);

class FastPathRequest {
  readonly method = 'GET';
  readonly path: string;

  constructor(
    private readonly incoming: IncomingMessage,
    readonly url: string,
  ) {
    this.path = getPath({ url } as Request);
  }

  /** As HonoRequest.header(name) over @hono/node-server's headers: repeated lines joined. */
  header(name: string): string | undefined {
    const lower = name.toLowerCase();
    if (!NON_JOINED.has(lower)) {
      const headers = this.incoming.headers;
      if (!Object.hasOwn(headers, lower)) return undefined;
      const value = headers[lower];
      if (typeof value === 'string') return trimHttpWhitespace(value);
    }
    const raw = this.incoming.rawHeaders;
    const separator = lower === 'cookie' ? '; ' : ', ';
    let value: string | undefined;
    for (let i = 0; i < raw.length; i += 2) {
      const line = raw[i]!;
      if (line.length === lower.length && line.toLowerCase() === lower) {
        const v = trimHttpWhitespace(raw[i + 1]!);
        value = value === undefined ? v : value + separator + v;
      }
    }
    return value;
  }

  query(name: string): string | undefined {
    return getQueryParam(this.url, name) as string | undefined;
  }
}

const isHttpWhitespace = (code: number) => code === 9 || code === 10 || code === 13 || code === 32;

function trimHttpWhitespace(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isHttpWhitespace(value.charCodeAt(start))) start++;
  while (end > start && isHttpWhitespace(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

/** Node's private fields that @hono/node-server sets so that Node writes Content-Length itself. */
interface Http1Outgoing {
  _contentLength: number | null;
  _hasBody: boolean;
  useChunkedEncodingByDefault: boolean;
  _removedContLen: boolean;
}

/**
 * The answer as @hono/node-server writes a response of plain headers and bytes (responseViaCache):
 * the same calls, so the same bytes on the wire.
 */
function write(outgoing: ServerResponse, answer: FastPathResponse): void {
  const { status, body } = answer;
  let headers = answer.headers;
  if (body !== null && !setContentLength(outgoing, status, body.byteLength))
    headers = { ...headers, 'Content-Length': String(body.byteLength) };
  outgoing.writeHead(status, headers);
  if (body === null) outgoing.end();
  else outgoing.end(body);
}

function setContentLength(outgoing: ServerResponse, status: number, length: number): boolean {
  const http1 = outgoing as unknown as Http1Outgoing;
  if (
    http1._contentLength === null &&
    http1._hasBody &&
    http1.useChunkedEncodingByDefault &&
    !http1._removedContLen &&
    status >= 200 &&
    status !== 204 &&
    status !== 304 &&
    !outgoing.hasHeader('content-length') &&
    !outgoing.hasHeader('transfer-encoding') &&
    !outgoing.hasHeader('trailer')
  ) {
    http1._contentLength = length;
    return true;
  }
  return false;
}

/**
 * A middleware's exit failed after the answer was chosen (none does in practice): the 500 problem the
 * app's error handler gives anything unexpected, without the error's text; the error is logged.
 */
function failed(c: FastPathContext, error: unknown): void {
  console.error(error);
  problem(c, new ServiceError('internal_error', 'The service failed to answer; the error was logged.'));
}

/** A problem written in place of the answer the fast path had made. */
function problem(c: FastPathContext, e: ServiceError): void {
  const outgoing = c.env.outgoing;
  if (outgoing.headersSent) {
    outgoing.end();
    return;
  }
  const requestId = c.get('requestId') as string | undefined;
  const body = JSON.stringify(
    problemBody((c.get('publicUrl') as string | undefined) ?? '', e, {
      instance: c.req.path,
      request_id: requestId,
    }),
  );
  outgoing.writeHead(e.status, {
    'content-type': 'application/problem+json',
    'cache-control': 'no-store',
    ...e.headers,
    ...(requestId ? { 'x-request-id': requestId } : {}),
  });
  outgoing.end(body);
}

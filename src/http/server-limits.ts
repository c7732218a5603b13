import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  ServerResponse,
} from 'node:http';
import type { Socket } from 'node:net';
import { ServiceError } from '../core/errors.js';
import { problemBody } from './problem.js';
import { refusedMethod } from './refused-method.js';

/** How long each part of a request may take, and how many connections are held. */
export const SERVER_LIMITS = {
  /** All request headers must arrive within this (a slow-headers client is cut off). */
  headersTimeoutMs: 10_000,
  /** The whole request (headers and body) within this. */
  requestTimeoutMs: 30_000,
  /**
   * How often Node checks the two above: only then does it enforce them, so a timeout fires up to
   * this much late (Node's default of 30 s made the 10 s and 30 s fire at up to 40 s and 60 s).
   */
  timeoutCheckMs: 1_000,
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: 5_000,
  /** On shutdown, requests already accepted get this long to finish; then connections are closed. */
  drainMs: 10_000,
} as const;

export type ServerLimits = { [K in keyof typeof SERVER_LIMITS]: number };

/**
 * Node's own refusals (bad request line, headers too large, timeouts) as problem+json, not empty
 * bodies; to a HEAD, or a request whose method cannot be told, without the body.
 */
const CLIENT_ERRORS: Record<string, ServiceError> = {
  HPE_HEADER_OVERFLOW: new ServiceError(
    'headers_too_large',
    'The request headers are larger than this server accepts (16 KiB).',
  ),
  ERR_HTTP_REQUEST_TIMEOUT: new ServiceError('request_timeout', 'The request did not arrive in time.'),
};

const METHOD_NOT_ALLOWED = new ServiceError('method_not_allowed', 'CONNECT is not served here.');

const BAD_REQUEST = new ServiceError('bad_request', 'The request could not be parsed as HTTP.');

const HOST_REQUIRED = new ServiceError('host_required', 'An HTTP/1.1 request must carry a Host header.');

const EXPECTATION_FAILED = new ServiceError(
  'expectation_failed',
  'The Expect header asks for something this server does not do (it knows only 100-continue).',
);

/**
 * An HTTP/1.1 request without a Host (RFC 9112, 3.2): 400 as problem+json. Node's own refusal
 * (requireHostHeader) has an empty body, so the server turns it off and its listener asks this.
 */
export function refusedWithoutHost(req: IncomingMessage, res: ServerResponse, publicUrl: string): boolean {
  if (req.headers.host || req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) return false;
  problemAnswer(res, HOST_REQUIRED, publicUrl);
  return true;
}

/** A refusal through Node's response, then the connection closed (after the request's body, if one comes). */
function problemAnswer(res: ServerResponse, e: ServiceError, publicUrl: string): void {
  const body = JSON.stringify(problemBody(publicUrl, e));
  res.writeHead(e.status, {
    'content-type': 'application/problem+json',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    connection: 'close',
  });
  res.end(body);
}

/** A request Node parsed but whose target cannot be made a URL (a backslash in the path, a bad Host). */
export function unreadableRequest(publicUrl: string): Response {
  return new Response(JSON.stringify(problemBody(publicUrl, BAD_REQUEST)), {
    status: 400,
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store' },
  });
}

function clientErrorResponse(error: NodeJS.ErrnoException, socket: Socket, publicUrl: string): string {
  const e = (error.code && CLIENT_ERRORS[error.code]) || BAD_REQUEST;
  return rawProblem(e, publicUrl, refusedMethod(error, socket));
}

/**
 * A whole HTTP answer written straight to the socket (for requests that never reach the app). A
 * HEAD gets what a GET would but the body (its length included); a request whose method cannot
 * be told (refused-method.ts) gets neither body nor length, the connection's close ending the
 * answer: right for a GET and a HEAD alike.
 */
function rawProblem(e: ServiceError, publicUrl: string, method: string | null): string {
  const status = `HTTP/1.1 ${e.status} ${e.title}\r\n`;
  if (method === null) return `${status}cache-control: no-store\r\nconnection: close\r\n\r\n`;
  const body = JSON.stringify(problemBody(publicUrl, e));
  const head =
    `${status}content-type: application/problem+json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
    'connection: close\r\n\r\n';
  return method === 'HEAD' ? head : head + body;
}

/**
 * A server for `listener`, bounded: timeouts on headers, requests and idle keep-alive; at most
 * `perClient` open connections from one address and `total` in all (one client cannot starve the
 * others); Node's own refusals and CONNECT answered as problem+json. Returns it with its drain:
 * stop accepting, let accepted requests finish for up to SERVER_LIMITS.drainMs (each answer then
 * says Connection: close and its socket is closed after it), then close every connection.
 */
export function boundServer(
  listener: RequestListener,
  options: {
    perClient: number;
    total: number;
    publicUrl: string;
    /** Other figures than SERVER_LIMITS' (tests, with short timeouts). */
    limits?: Partial<ServerLimits>;
    /** Node's own server options (header size, Host rule). */
    serverOptions?: { maxHeaderSize?: number; requireHostHeader?: boolean };
  },
): { server: Server; drain: () => Promise<void> } {
  const limits: ServerLimits = { ...SERVER_LIMITS, ...options.limits };
  let draining = false;
  const server = createServer(
    {
      ...options.serverOptions,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.timeoutCheckMs,
      ServerResponse: guardedResponse(() => draining),
    },
    listener,
  );
  server.maxConnections = options.total;
  const perAddress = new Map<string, number>();
  // Every socket, also those Node's HTTP layer no longer tracks (CONNECT, refused requests): the
  // drain ends them all, or a client that never closes its side keeps a stopped server alive.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const address = socket.remoteAddress ?? 'unknown';
    const open = (perAddress.get(address) ?? 0) + 1;
    perAddress.set(address, open);
    socket.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
    if (open > options.perClient) socket.destroy();
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
    answerAndClose(socket, clientErrorResponse(error, socket, options.publicUrl)),
  );
  // An Expect other than 100-continue: Node would answer 417 with an empty body.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) =>
    problemAnswer(res, EXPECTATION_FAILED, options.publicUrl),
  );
  // Node hands CONNECT to this event, never to the app, and closes the connection unanswered when no one listens.
  server.on('connect', (_req: unknown, socket: Socket) =>
    answerAndClose(socket, rawProblem(METHOD_NOT_ALLOWED, options.publicUrl, 'CONNECT')),
  );
  const drain = () =>
    new Promise<void>((done) => {
      draining = true;
      const force = setTimeout(() => {
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      }, limits.drainMs);
      force.unref();
      // http.Server.close() also destroys every idle keep-alive connection at once, and a
      // client's next request already on its way into one is then reset (40 of 40 keep-alive
      // clients sending one request after another). So none is closed for being idle here: a
      // request that comes is answered with Connection: close (guardedResponse), and a connection that
      // stays idle is closed by its own keep-alive timeout, as at any other time. (Closing them all
      // after a second still reset a few whose request had arrived but was not yet read, on a
      // loaded machine.)
      const closeIdle = server.closeIdleConnections;
      server.closeIdleConnections = () => {};
      try {
        server.close(() => {
          clearTimeout(force);
          done();
        });
      } finally {
        server.closeIdleConnections = closeIdle;
      }
    });
  return { server, drain };
}

/**
 * Says `Connection: close` on an answer that will not keep its connection:
 * - one sent before the request's body has all arrived (413, or a refusal that never reads it):
 *   the adapter drains such a body for at most 500 ms and then closes the socket, and a proxy
 *   that was told keep-alive would send its next request into that close. The socket is then
 *   closed once the body is in (closeAfterBody), not right after the answer;
 * - any answer during the drain: Node then closes the socket once it is sent. Told keep-alive,
 *   clients sent their next requests on connections the drain's deadline then reset.
 */
function guardedResponse(draining: () => boolean): typeof ServerResponse {
  // A class of the server's own rather than a wrapper set on each response: no closure per request,
  // and every response keeps the shape Node's HTTP code expects.
  class GuardedResponse extends ServerResponse {
    override writeHead(...args: unknown[]): this {
      if (!this.headersSent) {
        const req = this.req;
        if (bodyPending(req)) {
          this.setHeader('connection', 'close');
          if (req.socket) closeAfterBody(req, req.socket);
        } else if (draining()) this.setHeader('connection', 'close');
      }
      return (ServerResponse.prototype.writeHead as (...a: unknown[]) => this).apply(this, args);
    }
  }
  return GuardedResponse as unknown as typeof ServerResponse;
}

/**
 * Whether some of the request's body has yet to arrive. Not just `!req.complete`: an answer
 * written inside the request event (the fast path's cached reads) comes before Node marks even a
 * request without a body complete.
 */
function bodyPending(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return length !== undefined ? Number(length) > 0 : req.headers['transfer-encoding'] !== undefined;
}

/** After an early answer, how long and how much of the rest of a request's body is read (and dropped) before closing. */
const LINGER_MS = 5_000;
const LINGER_BYTES = 8 * 1024 * 1024;

/**
 * Node closes a connection right after a `Connection: close` answer (socket.destroySoon). When the
 * answer came before the request's body had all arrived, unread bytes make that close a reset,
 * and a proxy still sending the body fails its next write (nginx: `writev() failed (32: Broken
 * pipe) while sending request to upstream`) and answers 502 instead of our answer, a POST it does
 * not retry. So the answer is followed by our end of writing, the rest of the body is read and
 * dropped, and the socket is closed once it is in (at most LINGER_MS and LINGER_BYTES), as
 * nginx's own lingering close does.
 */
function closeAfterBody(req: IncomingMessage, socket: Socket): void {
  const destroySoon = socket.destroySoon.bind(socket);
  let lingering = false;
  socket.destroySoon = () => {
    if (lingering) return;
    lingering = true;
    if (req.complete || socket.destroyed) {
      destroySoon();
      return;
    }
    socket.end();
    let read = 0;
    const close = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    const timer = setTimeout(close, LINGER_MS);
    timer.unref();
    req.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > LINGER_BYTES) close();
    });
    req.once('end', close);
    req.once('error', close);
    socket.once('close', () => clearTimeout(timer));
    req.resume();
  };
}

/** How long a refused client may take to read its answer and close its side. */
const REFUSED_LINGER_MS = 2_000;

/**
 * Sends a refusal on a socket the HTTP layer has let go and ends it; destroyed after a moment if
 * the client does not close its side (one that never does would hold it open for good). Not
 * destroyed at once: a reset with unread bytes in the buffer can make the peer (a proxy) lose
 * the answer.
 */
function answerAndClose(socket: Socket, answer: string): void {
  if (!socket.writable || socket.destroyed) {
    socket.destroy();
    return;
  }
  socket.end(answer);
  setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
}

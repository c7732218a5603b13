import http from 'node:http';
import https from 'node:https';
import { gunzipSync } from 'node:zlib';
import { SERVICE_VERSION } from '../config/paths.js';
import { MalformedPageError, splitWorksPage, type WorksPage } from './openalex-page.js';

/**
 * Reads pages of the OpenAlex `/works` list. Rate limits (429) and server errors (5xx), dropped
 * connections and cut-off pages are retried with exponential backoff, honouring Retry-After; an
 * answer that retrying cannot change (a refused key, a bad filter) fails at once, and so does a
 * server that cannot be reached at all on the first request (a wrong OPENALEX_API_URL).
 */

export interface OpenAlexClientOptions {
  /** The API root, e.g. https://api.openalex.org (OPENALEX_API_URL). */
  baseUrl: string;
  /** Sent as the `api_key` query parameter (OPENALEX_API_KEY). */
  apiKey?: string | null;
  /** Retries of one page before the pull stops (default 5). */
  retries?: number;
  /** First backoff delay; doubled on each retry (default 1 s), capped at maxDelayMs (default 60 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Per-request time limit (default 120 s). */
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  onRetry?: (line: string) => void;
}

export interface WorksQuery {
  filter: string;
  select: readonly string[];
  cursor: string;
  perPage: number;
}

/** A failure of the API that the user can act on; the message is one line. */
export class OpenAlexError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** Longest wait a Retry-After may ask for before we give up on the page. */
const MAX_RETRY_AFTER_MS = 10 * 60_000;

/** How long to wait before retry number `attempt` (0-based): Retry-After when given, else backoff. */
export function retryDelayMs(
  attempt: number,
  retryAfter: string | null,
  baseDelayMs = 1000,
  maxDelayMs = 60_000,
  now = Date.now(),
): number {
  if (retryAfter !== null && retryAfter.trim() !== '') {
    const value = retryAfter.trim();
    const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - now;
    if (Number.isFinite(ms)) return Math.min(Math.max(0, ms), MAX_RETRY_AFTER_MS);
  }
  return Math.min(baseDelayMs * 2 ** attempt, maxDelayMs);
}

function worksUrl(baseUrl: string, query: WorksQuery, apiKey?: string | null): URL {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/works`);
  url.searchParams.set('filter', query.filter);
  url.searchParams.set('select', query.select.join(','));
  url.searchParams.set('per_page', String(query.perPage));
  url.searchParams.set('cursor', query.cursor);
  if (apiKey) url.searchParams.set('api_key', apiKey);
  return url;
}

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function causeCode(e: unknown): string | null {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' ? code : null;
}

interface Answer {
  status: number;
  statusText: string;
  retryAfter: string | null;
  location: string | null;
  body: Buffer;
}

/**
 * Where page bodies are read: one buffer, grown to the largest page and reused for every request,
 * so that a page of a megabyte costs no fresh allocation (and no fresh memory pages to fault in).
 */
class BodyBuffer {
  private buf = Buffer.allocUnsafeSlow(1 << 20);

  /** Room for `size` bytes, keeping the first `keep`. */
  reserve(size: number, keep: number): Buffer {
    if (size > this.buf.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(size, this.buf.length * 2));
      this.buf.copy(grown, 0, 0, keep);
      this.buf = grown;
    }
    return this.buf;
  }
}

/**
 * One GET with node's own http client: several times cheaper than fetch on megabyte pages, which
 * matters when a pull must keep up with ingest. Gzip is asked for and undone here. The body is a
 * view of `into`: valid until the next request.
 */
function get(url: URL, timeoutMs: number, agent: http.Agent, into: BodyBuffer): Promise<Answer> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(
      url,
      {
        agent,
        headers: {
          accept: 'application/json',
          'accept-encoding': 'gzip',
          'user-agent': `research-intensity/${SERVICE_VERSION} (ri pull)`,
        },
      },
      (res) => {
        let size = 0;
        let buf = into.reserve(Number(res.headers['content-length']) || 0, 0);
        res.on('data', (c: Buffer) => {
          if (size + c.length > buf.length) buf = into.reserve(size + c.length, size);
          c.copy(buf, size);
          size += c.length;
        });
        res.on('error', reject);
        res.on('aborted', () => reject(new Error('the connection closed mid-answer')));
        res.on('end', () => {
          if (!res.complete) return reject(new Error('the connection closed mid-answer'));
          try {
            const raw = buf.subarray(0, size);
            const retryAfter = res.headers['retry-after'];
            resolve({
              status: res.statusCode ?? 0,
              statusText: res.statusMessage ?? '',
              retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
              location: res.headers.location ?? null,
              body: res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw,
            });
          } catch (e) {
            reject(e);
          }
        });
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer in ${timeoutMs / 1000} s`)));
    req.on('error', reject);
  });
}

export class OpenAlexClient {
  private reached = false;
  /** Keep-alive connections, closed by close() so the process can exit. */
  private readonly agent: http.Agent;
  private readonly body = new BodyBuffer();

  constructor(private readonly options: OpenAlexClientOptions) {
    this.agent = options.baseUrl.startsWith('https:')
      ? new https.Agent({ keepAlive: true })
      : new http.Agent({ keepAlive: true });
  }

  close(): void {
    this.agent.destroy();
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  /**
   * One page, retried as the class says. Its lines are views of a buffer the client reuses: write
   * them before asking for the next page.
   */
  async worksPage(query: WorksQuery): Promise<WorksPage> {
    const o = this.options;
    const retries = o.retries ?? 5;
    const url = worksUrl(o.baseUrl, query, o.apiKey);
    let lastProblem = '';
    for (let attempt = 0; ; attempt++) {
      let retryAfter: string | null = null;
      try {
        const res = await get(url, o.timeoutMs ?? 120_000, this.agent, this.body);
        this.reached = true;
        if (res.status >= 200 && res.status < 300) {
          // A page cut short (a dropped connection) fails the scan and is read again.
          return splitWorksPage(res.body);
        }
        const detail = problemText(res.body);
        if (res.status === 429 || res.status >= 500) {
          retryAfter = res.retryAfter;
          lastProblem = `${res.status} ${res.statusText}${detail}`.trim();
        } else if (res.status >= 300 && res.status < 400 && res.location) {
          const to = new URL(res.location, url);
          throw new OpenAlexError(
            `the OpenAlex API at ${o.baseUrl} redirects to ${to.origin}${to.pathname.replace(/\/works$/, '')}: set OPENALEX_API_URL to it`,
            res.status,
          );
        } else if (res.status === 401 || res.status === 403) {
          throw new OpenAlexError(
            o.apiKey
              ? `the OpenAlex API refused the API key (${res.status} ${res.statusText}${detail}): check OPENALEX_API_KEY`
              : `the OpenAlex API asks for an API key (${res.status} ${res.statusText}${detail}): set OPENALEX_API_KEY`,
            res.status,
          );
        } else {
          throw new OpenAlexError(
            `the OpenAlex API refused the request (${res.status} ${res.statusText}${detail})`,
            res.status,
          );
        }
      } catch (e) {
        if (e instanceof OpenAlexError) throw e;
        const code = causeCode(e);
        if (!this.reached && code !== null && CONNECT_ERRORS.has(code)) {
          throw new OpenAlexError(
            `cannot reach the OpenAlex API at ${o.baseUrl} (${code}): check OPENALEX_API_URL`,
          );
        }
        lastProblem =
          e instanceof MalformedPageError
            ? `a page that is not OpenAlex JSON (${e.message})`
            : (e as Error).name === 'TimeoutError'
              ? 'no answer in time'
              : `${(e as Error).message}${code ? ` (${code})` : ''}`;
      }
      if (attempt >= retries) {
        throw new OpenAlexError(
          `the OpenAlex API failed ${attempt + 1} time(s) in a row at ${o.baseUrl} (last: ${lastProblem})`,
        );
      }
      const delay = retryDelayMs(attempt, retryAfter, o.baseDelayMs, o.maxDelayMs);
      o.onRetry?.(`pull: ${lastProblem}; retrying in ${(delay / 1000).toFixed(1)} s`);
      await (o.sleep ?? sleepFor)(delay);
    }
  }
}

/** The API's own explanation of a refusal, as `: message` (OpenAlex answers {error, message}). */
function problemText(body: Buffer): string {
  const text = body.toString('utf8', 0, 4096);
  let message = text;
  try {
    const body = JSON.parse(text) as { message?: unknown; error?: unknown };
    message = String(body.message ?? body.error ?? '');
  } catch {
    // not JSON: the text itself, if short
  }
  message = message.replace(/\s+/g, ' ').trim();
  if (!message || message.startsWith('<')) return '';
  return `: ${message.length > 200 ? `${message.slice(0, 200)}...` : message}`;
}

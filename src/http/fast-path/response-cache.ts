import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { chooseEncoding, compressSync, type Encoding, MIN_COMPRESS_BYTES } from '../../util/compression.js';
import type { AppEnv } from '../context.js';
import { prefersCsv } from '../csv.js';
import { routeLabel } from '../metrics.js';
import type { Middleware } from '../middleware.js';
import { compress, encodedEtag, isCompressible, markPrecompressed, replaceResponse } from './compression.js';
import { FastPathContext } from './fast-path.js';
import { FastPathResponse } from './handoff.js';
import { recordCoreTime, takeResponseHeaders } from './response-headers.js';

/**
 * Every answer is a pure function of (snapshot, URL, caller's plan), so a successful GET is kept,
 * serialised, per snapshot: repeated calls skip the handler and JSON.stringify. The cache sits
 * after authentication and rate limiting (every request is still authenticated and counted) and
 * its key holds the plan, so a hit can only repeat an answer the same plan was already given.
 *
 * An entry holds each representation ready to send: the identity bytes and, above
 * MIN_COMPRESS_BYTES, the gzip and Brotli bytes, compressed once (off the event loop) when the
 * answer is cached. A request gets the one its Accept-Encoding prefers, with that
 * representation's own ETag (If-None-Match -> 304), Cache-Control and Vary.
 */
interface Representation {
  body: Uint8Array<ArrayBuffer>;
  etag: string;
  /** Every header of a 200, prepared once. */
  headers: Record<string, string>;
  /** The headers of its 304: validators and caching, no content metadata (RFC 9110 15.4.5). */
  notModified: Record<string, string>;
}

interface Entry {
  /** The route pattern that made it, for the metrics and the log of a hit the fast path answers. */
  route: string;
  identity: Representation;
  br?: Representation;
  gzip?: Representation;
  bytes: number;
  /** Whether it has gzip and Brotli forms (made when kept, or on the first hit that asks). */
  compressible: boolean;
}

/**
 * The whole cache of one snapshot holds at most this many bytes of bodies (oldest entries go
 * first). 32 MB keeps every element, list and subject answer of the day hot, and keeps a replica
 * under its 300 MB budget when thousands of distinct research questions pass (bench/worker-memory.mjs).
 */
export const RESPONSE_CACHE_BYTES = 32 * 1024 * 1024;
const MAX_BODY = 512 * 1024;

/** The bodies of one snapshot's cache, in insertion order, with their total size. */
interface Store {
  entries: Map<string, Entry>;
  bytes: number;
}

/** What a request that went on to the handler keeps for the exit: when, and for a GET or HEAD, where to keep its answer. */
interface Pending {
  start: number;
  miss?: { key: string; store: Store; encoding: Encoding | null; plan: string; snapshotVersion: string };
}
const PENDING = 'responseCachePending';
type WithPending = AppEnv & { Variables: { [PENDING]?: Pending } };

export function responseCache(): Middleware<Context<AppEnv>> {
  return {
    enter(c) {
      // Paid calls are never answered from the cache: each is verified and settled on its own.
      // A HEAD is the same GET without the body (RFC 9110 9.3.2): it shares GET's entries.
      const method = c.req.method;
      if ((method !== 'GET' && method !== 'HEAD') || c.get('payment')) {
        (c as Context<WithPending>).set(PENDING, { start: performance.now() });
        return undefined;
      }
      const snapshot = c.get('snapshot');
      const plan = c.get('caller')?.plan ?? 'anonymous';
      // Path and query only: the Host header (or any other header) is not part of an answer, and
      // keying on it let one client fill memory with copies of the same answer.
      const url = c.req.url;
      // The representation too: a route that answers CSV to Accept: text/csv keeps both forms apart.
      const form = prefersCsv(c.req.header('accept')) ? 'csv|' : '';
      // And the answer's version: a read pinned by the RI-Data-Version header has a current read's URL.
      const key = `${snapshot.version}|${plan}|${form}${url.slice(url.indexOf('/', url.indexOf('//') + 2))}`;
      const store = snapshot.memoize('response-cache', (): Store => ({ entries: new Map(), bytes: 0 }));
      const encoding = chooseEncoding(c.req.header('accept-encoding'));
      const hit = store.entries.get(key);
      if (hit) {
        if (c instanceof FastPathContext) c.route = hit.route;
        return respond(c, representationOf(store, hit, encoding), true);
      }
      (c as Context<WithPending>).set(PENDING, {
        start: performance.now(),
        miss: { key, store, encoding, plan, snapshotVersion: snapshot.version },
      });
      return undefined;
    },
    exit(c) {
      const pending = (c as Context<WithPending>).get(PENDING);
      if (!pending) return undefined;
      // The handler's time is the core's share of Server-Timing.
      recordCoreTime(c, performance.now() - pending.start);
      return pending.miss ? keep(c, pending.miss) : undefined;
    },
  };
}

/**
 * Keeps a successful answer (every representation) and answers with the one asked for. Only that
 * one is waited for: the other encoding is made after the answer is sent (waiting for both cost a
 * research answer about 2 ms at 1M works), and a hit that comes before it is ready makes it then.
 */
async function keep(c: Context<AppEnv>, miss: NonNullable<Pending['miss']>): Promise<void> {
  const { key, store, encoding, plan, snapshotVersion } = miss;
  const cache = store.entries;
  // A route that answers no-store (a lab quote carries its own expiry) is never kept, nor a file
  // served in byte ranges (an export): it is streamed from disk, and a kept copy would answer a
  // Range with the whole.
  if (
    c.res.status !== 200 ||
    c.res.headers.get('cache-control') === 'no-store' ||
    c.res.headers.has('accept-ranges')
  )
    return;
  const body: Uint8Array<ArrayBuffer> = new Uint8Array(await c.res.arrayBuffer());
  const etag = `W/"${createHash('sha1').update(`${snapshotVersion}|${key}`).digest('base64url').slice(0, 22)}"`;
  const route = c.res.headers;
  const headers = cacheHeaders(route.get('content-type') ?? 'application/json', plan !== 'anonymous', route);
  const compressible = isCompressible(headers['content-type']!) && body.length >= MIN_COMPRESS_BYTES;
  const kept = body.length <= MAX_BODY && !cache.has(key);
  const entry: Entry = {
    route: routeLabel(c),
    identity: representation(body, etag, headers),
    bytes: body.length,
    compressible,
  };
  if (compressible && encoding) addEncoding(null, entry, encoding, await compress(body, encoding));
  if (kept && !cache.has(key)) {
    for (const [oldKey, old] of cache) {
      if (store.bytes + entry.bytes <= RESPONSE_CACHE_BYTES) break;
      cache.delete(oldKey);
      store.bytes -= old.bytes;
    }
    cache.set(key, entry);
    store.bytes += entry.bytes;
    if (compressible)
      for (const other of ENCODINGS)
        if (!entry[other])
          void compress(body, other)
            .then((bytes) => {
              // Made meanwhile by a hit (representationOf), or the entry gone: nothing to add.
              if (entry[other] || cache.get(key) !== entry) return;
              addEncoding(store, entry, other, bytes);
            })
            .catch(() => {});
  }
  replaceResponse(c, respond(c, entry[encoding ?? 'identity'] ?? entry.identity, false));
}

const ENCODINGS: Encoding[] = ['br', 'gzip'];

/** Adds an encoded form to an entry, counted in its size and, once it is kept, in its store's. */
function addEncoding(
  store: Store | null,
  entry: Entry,
  encoding: Encoding,
  bytes: Uint8Array<ArrayBuffer>,
): void {
  const { identity } = entry;
  entry[encoding] = representation(bytes, encodedEtag(identity.etag, encoding), {
    ...withoutEtag(identity.headers),
    'content-encoding': encoding,
  });
  entry.bytes += bytes.length;
  if (store) store.bytes += bytes.length;
}

const withoutEtag = ({ etag: _etag, ...headers }: Record<string, string>) => headers;

/** A kept answer's representation for an encoding; one not made yet is made now, on this thread. */
function representationOf(store: Store, entry: Entry, encoding: Encoding | null): Representation {
  if (!encoding || !entry.compressible) return entry.identity;
  if (!entry[encoding]) addEncoding(store, entry, encoding, compressSync(entry.identity.body, encoding));
  return entry[encoding]!;
}

/**
 * The stored representation (or its 304) with every header at once (headers set on a finished
 * response would make @hono/node-server rebuild it as a stream), in a plain object with the
 * headers every answer carries, so @hono/node-server writes them as they are (response-headers.ts).
 * A HEAD gets GET's status and headers, and the length of the body it is not sent.
 */
function respond(c: Context<AppEnv>, rep: Representation, hit: boolean): Response {
  markPrecompressed(c);
  const fresh = notModified(c, rep.etag);
  const head = c.req.method === 'HEAD';
  const own = fresh
    ? rep.notModified
    : head
      ? { ...rep.headers, 'content-length': String(rep.body.length) }
      : rep.headers;
  const body = fresh || head ? null : rep.body;
  const headers = takeResponseHeaders(c, own, hit);
  // On the fast path (fast-path.ts), its own response: written as it is, with no Response object between.
  if (headers && c instanceof FastPathContext)
    return new FastPathResponse(fresh ? 304 : 200, headers, body) as unknown as Response;
  if (headers) return new Response(body, { status: fresh ? 304 : 200, headers });
  return body ? c.body(body, 200, own) : c.body(null, fresh ? 304 : 200, own);
}

function representation(
  body: Uint8Array<ArrayBuffer>,
  etag: string,
  headers: Record<string, string>,
): Representation {
  const withTag: Record<string, string> = { ...headers, etag };
  const { 'content-type': _type, 'content-encoding': _encoding, ...notModified } = withTag;
  return { body, etag, headers: withTag, notModified };
}

function cacheHeaders(contentType: string, keyed: boolean, route: Headers): Record<string, string> {
  const byAccept =
    route
      .get('vary')
      ?.split(',')
      .some((h) => h.trim().toLowerCase() === 'accept') ?? false;
  // A CSV answer carries its envelope in headers (csv.ts), the skill its file name, a badge its
  // policy (an SVG opened alone runs nothing): a hit repeats them.
  const envelope: Record<string, string> = {};
  for (const name of ['link', 'ri-data-version', 'content-disposition', 'content-security-policy']) {
    const value = route.get(name);
    if (value !== null) envelope[name] = value;
  }
  return {
    'content-type': contentType,
    'cache-control': keyed ? 'private, max-age=300' : 'public, max-age=300',
    vary: byAccept
      ? 'Authorization, Accept, Accept-Encoding, RI-Data-Version'
      : 'Authorization, Accept-Encoding, RI-Data-Version',
    ...envelope,
  };
}

/** If-None-Match by weak comparison (RFC 9110 13.1.2): `W/` does not matter, the opaque tag does. */
export function notModified(c: Context, etag: string): boolean {
  const inm = c.req.header('if-none-match');
  if (inm === undefined) return false;
  const opaque = etag.slice(2);
  return inm.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === opaque;
  });
}

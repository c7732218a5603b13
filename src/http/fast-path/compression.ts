import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, gzip } from 'node:zlib';
import type { Context } from 'hono';
import {
  brotliOptions,
  chooseEncoding,
  compressSync,
  type Encoding,
  MIN_COMPRESS_BYTES,
  qualities,
} from '../../util/compression.js';
import type { Middleware } from '../middleware.js';

/** JSON and text, but not event streams: they are sent as they come, never buffered. */
const COMPRESSIBLE =
  /^(application\/(json|problem\+json|javascript|atom\+xml)|image\/svg\+xml|text\/(?!event-stream))/;

export const isCompressible = (contentType: string) => COMPRESSIBLE.test(contentType);

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Up to this size an answer is compressed in place: about 45 µs for 4 KB at Brotli quality 4,
 * where a trip to libuv's thread pool and back costs about 200 µs of latency (measured). */
const SYNC_MAX_BYTES = 16 * 1024;

/**
 * Compresses small answers at once and larger ones on libuv's thread pool, not the event loop.
 * Brotli at quality 4 compresses JSON about as well as gzip -9 at a fraction of the cost. (Hono's
 * compress middleware uses CompressionStream, which has no Brotli in Node 20.)
 */
export function compress(raw: Uint8Array, encoding: Encoding): Promise<Uint8Array<ArrayBuffer>> {
  if (raw.length <= SYNC_MAX_BYTES) return Promise.resolve(compressSync(raw, encoding));
  // One output chunk for the whole answer: with zlib's 16 KB chunks, each chunk was another trip
  // to the thread pool and back (both encodings of a 20 KB answer: 1.4-1.7 ms, now 0.9-1.1).
  const chunkSize = Math.min(raw.length + 1024, MAX_CHUNK_BYTES);
  return (
    encoding === 'br'
      ? brotliAsync(raw, { ...brotliOptions(raw), chunkSize })
      : gzipAsync(raw, { level: 6, chunkSize })
  ) as Promise<Uint8Array<ArrayBuffer>>;
}

const MAX_CHUNK_BYTES = 1024 * 1024;

/** Whether gzip is acceptable at all (an answer that can only be made as gzip cheaply: MCP's cache). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  let known = gzipOk.get(acceptEncoding);
  if (known === undefined) {
    known = qualities(acceptEncoding).gzip > 0;
    if (gzipOk.size >= 256) gzipOk.clear();
    gzipOk.set(acceptEncoding, known);
  }
  return known;
}
const gzipOk = new Map<string, boolean>();

/** The ETag of an encoded form: each representation has its own validator (RFC 9110 8.8.3). */
export function encodedEtag(etag: string, encoding: Encoding): string {
  return `${etag.slice(0, -1)}-${encoding}"`;
}

/**
 * Compressed bytes of answers that are the same for everyone (Cache-Control: public), by their
 * content: the web pages are rendered once per snapshot, and so are compressed once here. Hashing
 * costs a tenth of compressing. Bounded; the oldest entries go first.
 */
const MEMO_MAX_BYTES = 16 * 1024 * 1024;
const MEMO_MAX_BODY = 512 * 1024;
const memo = new Map<string, Uint8Array<ArrayBuffer>>();
let memoBytes = 0;

async function compressShared(raw: Uint8Array, encoding: Encoding): Promise<Uint8Array<ArrayBuffer>> {
  if (raw.length > MEMO_MAX_BODY) return compress(raw, encoding);
  const key = `${encoding}:${createHash('sha1').update(raw).digest('base64')}`;
  const known = memo.get(key);
  if (known) return known;
  const body = await compress(raw, encoding);
  if (memo.has(key)) return body;
  for (const [oldKey, old] of memo) {
    if (memoBytes + body.length <= MEMO_MAX_BYTES) break;
    memo.delete(oldKey);
    memoBytes -= old.length;
  }
  memo.set(key, body);
  memoBytes += body.length;
  return body;
}

/**
 * Puts `res` in place of the answer as it is. Assigning c.res would copy every header of the
 * previous answer onto it (Hono merges them), bringing back the identity ETag and the route's Vary.
 */
export function replaceResponse(c: Context, res: Response): void {
  c.res = undefined;
  c.res = res;
}

const PRECOMPRESSED = 'precompressed';
type WithPrecompressed = { Variables: { [PRECOMPRESSED]?: true } };

/** Marks an answer that already carries its negotiated encoding (the response cache's). */
export function markPrecompressed(c: Context): void {
  (c as Context<WithPrecompressed>).set(PRECOMPRESSED, true);
}

/**
 * gzip or Brotli, by Accept-Encoding, for JSON and text answers that the response cache did not
 * already encode (errors, pages, research and lab answers, answers too large to cache), off the
 * event loop and only above MIN_COMPRESS_BYTES. Every compressible answer says
 * `Vary: Accept-Encoding`. A HEAD is answered as its GET is, encoding, ETag and length included,
 * without the body.
 */
export function compression(): Middleware {
  return {
    // A cached answer is done: touching the headers or body of @hono/node-server's lightweight
    // Response would turn it into a stream and take the slow path. (No promise for it either.)
    exit: (c) =>
      (c as Context<WithPrecompressed>).get(PRECOMPRESSED)
        ? undefined
        : c.req.method === 'HEAD'
          ? compressResponse(c).then(() => withoutBody(c))
          : compressResponse(c),
  };
}

/**
 * A HEAD's answer made by its GET's route: the body dropped here rather than by Hono, with the
 * Content-Length it had, which Node can no longer count (RFC 9110 9.3.2: the same header fields).
 */
async function withoutBody(c: Context): Promise<void> {
  const res = c.res;
  if (!res.body || res.headers.has('content-length')) return;
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return;
  const length = (await res.arrayBuffer()).byteLength;
  const headers = new Headers(res.headers);
  headers.set('content-length', String(length));
  replaceResponse(c, new Response(null, { status: res.status, headers }));
}

async function compressResponse(c: Context): Promise<void> {
  const res = c.res;
  const headers = res.headers;
  if (
    res.status === 204 ||
    res.status === 304 ||
    headers.has('content-encoding') ||
    !isCompressible(headers.get('content-type') ?? '')
  )
    return;
  if (!/\baccept-encoding\b/i.test(headers.get('vary') ?? '')) headers.append('vary', 'Accept-Encoding');
  const encoding = chooseEncoding(c.req.header('accept-encoding'));
  if (!encoding || !res.body) return;
  const raw = new Uint8Array(await res.arrayBuffer());
  if (raw.length < MIN_COMPRESS_BYTES) {
    replaceResponse(c, new Response(raw, { status: res.status, headers }));
    return;
  }
  const body = /\bpublic\b/.test(headers.get('cache-control') ?? '')
    ? await compressShared(raw, encoding)
    : await compress(raw, encoding);
  const out = new Headers(headers);
  out.set('content-encoding', encoding);
  out.delete('content-length');
  const etag = out.get('etag');
  if (etag) out.set('etag', encodedEtag(etag, encoding));
  replaceResponse(c, new Response(body, { status: res.status, headers: out }));
}

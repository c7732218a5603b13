import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

/**
 * The two encodings the service answers in, how an Accept-Encoding header chooses between them,
 * and how a body is compressed on the thread that asks: the HTTP layer's compression, and a worker
 * thread that writes a whole response (MCP's research result), make the same bytes.
 */
export type Encoding = 'br' | 'gzip';

/** Below this a compressed answer saves less than a packet and costs more CPU than it saves. */
export const MIN_COMPRESS_BYTES = 1024;

/** The same bytes as compress, made on this thread (for answers up to a few KB, or one in a hurry). */
export function compressSync(raw: Uint8Array, encoding: Encoding): Uint8Array<ArrayBuffer> {
  // zlib's answers are Buffers over ordinary ArrayBuffers.
  return (
    encoding === 'br' ? brotliCompressSync(raw, brotliOptions(raw)) : gzipSync(raw, { level: 6 })
  ) as Uint8Array<ArrayBuffer>;
}

export const brotliOptions = (raw: Uint8Array) => ({
  params: { [constants.BROTLI_PARAM_QUALITY]: 4, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
});

/**
 * The encoding to answer with for an Accept-Encoding header (RFC 9110 12.5.3): the highest
 * q-value among br and gzip, br on a tie, `*` standing for either when not named; null for
 * identity (no header, `identity`, or both refused with q=0). Parsed once per distinct header:
 * clients send few distinct values, and this runs for every cached answer.
 */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding | null {
  if (!acceptEncoding) return null;
  const known = chosen.get(acceptEncoding);
  if (known !== undefined) return known;
  const choice = negotiate(acceptEncoding);
  if (chosen.size >= 256) chosen.clear();
  chosen.set(acceptEncoding, choice);
  return choice;
}
const chosen = new Map<string, Encoding | null>();

function negotiate(header: string): Encoding | null {
  const { br, gzip } = qualities(header);
  if (br > 0 && br >= gzip) return 'br';
  if (gzip > 0) return 'gzip';
  return null;
}

/** The q-values of br and gzip in an Accept-Encoding header, `*` standing for either when not named. */
export function qualities(header: string): { br: number; gzip: number } {
  let br: number | undefined;
  let gz: number | undefined;
  let any: number | undefined;
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';');
    const coding = name!.trim().toLowerCase();
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!Number.isFinite(q) || q < 0 || q > 1) continue;
    if (coding === 'br') br = Math.max(br ?? 0, q);
    else if (coding === 'gzip' || coding === 'x-gzip') gz = Math.max(gz ?? 0, q);
    else if (coding === '*') any = q;
  }
  return { br: br ?? any ?? 0, gzip: gz ?? any ?? 0 };
}

import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';

/**
 * Streams the lines of a plain or gzip file as byte ranges of decompressed chunks: no whole-file
 * buffer, no per-line string until the caller decodes one. `onLine` gets the buffer, the range
 * and the 1-based line number; `onProgress` the compressed bytes read so far.
 */
export async function readLines(
  path: string,
  onLine: (buf: Buffer, start: number, end: number, lineNumber: number) => void,
  onProgress?: (compressedBytes: number) => void,
  afterChunk?: () => Promise<void> | void,
): Promise<number> {
  const gzipped = await isGzip(path);
  const raw = createReadStream(path, { highWaterMark: 1 << 20 });
  const stream = gzipped ? raw.pipe(createGunzip({ chunkSize: 1 << 20 })) : raw;
  // Listening after pipe(): a 'data' listener starts the flow, and no chunk may pass before the pipe.
  let compressed = 0;
  if (gzipped) {
    raw.on('data', (chunk) => {
      compressed += chunk.length;
      onProgress?.(compressed);
    });
    raw.on('error', (e) => stream.destroy(e));
  }

  let carry: Buffer | null = null;
  let lineNumber = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (!gzipped) {
      compressed += chunk.length;
      onProgress?.(compressed);
    }
    const buf = chunk;
    let start = 0;
    if (carry) {
      const nl = buf.indexOf(10);
      if (nl === -1) {
        carry = Buffer.concat([carry, buf]);
        continue;
      }
      const joined = Buffer.concat([carry, buf.subarray(0, nl)]);
      carry = null;
      onLine(joined, 0, joined.length, ++lineNumber);
      start = nl + 1;
    }
    let nl = buf.indexOf(10, start);
    while (nl !== -1) {
      onLine(buf, start, nl, ++lineNumber);
      start = nl + 1;
      nl = buf.indexOf(10, start);
    }
    if (start < buf.length) {
      carry = Buffer.from(buf.subarray(start)); // copy: the stream may reuse its chunk
    }
    // Backpressure: the consumer may hold the next chunk until its writes catch up.
    await afterChunk?.();
  }
  if (carry && carry.length > 0) onLine(carry, 0, carry.length, ++lineNumber);
  return lineNumber;
}

async function isGzip(path: string): Promise<boolean> {
  const fh = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await fh.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { DATA_VERSION_DIGITS } from '../contracts/data-version.js';
import { runInWorker } from '../util/one-shot-worker.js';
import { workerFile } from '../util/worker-file.js';

/**
 * The data_version of a snapshot file: a content hash of its bytes. Read into two buffers used in
 * turn (the next piece is read while this one is hashed): a fresh buffer per piece was the file's
 * size in new memory to fault in and collect, 800 MB at 1M works.
 */
export async function contentHash(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  const size = 1 << 22;
  const buffers: [Buffer, Buffer] = [Buffer.allocUnsafeSlow(size), Buffer.allocUnsafeSlow(size)];
  const fh = await open(path, 'r');
  try {
    let position = 0;
    let next = fh.read(buffers[0], 0, size, position);
    for (let i: 0 | 1 = 0; ; i = i === 0 ? 1 : 0) {
      const { bytesRead } = await next;
      signal?.throwIfAborted();
      if (bytesRead === 0) break;
      position += bytesRead;
      next = fh.read(buffers[i === 0 ? 1 : 0], 0, size, position);
      hash.update(buffers[i].subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  return hash.digest('hex').slice(0, DATA_VERSION_DIGITS);
}

/**
 * Files from this size are hashed in a thread of their own: at 1M works a snapshot is about
 * 700 MB, about 0.5 s of SHA-256 in 4 MB pieces, each of which held a server's event loop 3-4 ms
 * while it checked a snapshot it switched to. Below it, a thread's start costs more than it saves.
 */
export const HASH_IN_THREAD_FROM = 64 * 1024 * 1024;

/**
 * contentHash, in a worker thread for a large file when the compiled worker is there. `signal`
 * stops it (the thread is ended), rejecting with the signal's reason.
 */
export function fileHash(path: string, signal?: AbortSignal): Promise<string> {
  const file = workerFile(import.meta.url, './file-hash-worker.js');
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    // contentHash reports it.
  }
  if (size < HASH_IN_THREAD_FROM || !existsSync(file)) return contentHash(path, signal);
  return hashInWorker(file, path, signal);
}

/** contentHash of `path` in the worker thread `file` (file-hash-worker.js). */
export function hashInWorker(file: string, path: string, signal?: AbortSignal): Promise<string> {
  return runInWorker<string>(file, { path }, 'hashing', signal);
}

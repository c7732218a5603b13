import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentHash, HASH_IN_THREAD_FROM, hashInWorker } from '../../../src/snapshot/file-hash.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { verifySnapshot } from '../../../src/snapshot/integrity.js';
import { workerFile } from '../../../src/util/worker-file.js';
import { tempDir } from '../../helpers/works.js';

/**
 * A snapshot's name is the SHA-256 of its bytes (the first 16 hex digits), computed on the
 * calling thread or, for a large file, in a worker thread: both give the one answer.
 */
const worker = workerFile(
  new URL('../../../src/snapshot/file-hash.js', import.meta.url).href,
  './file-hash-worker.js',
);

/** Bytes that differ all along (a repeated pattern would hide a piece read twice or skipped). */
function bytes(n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  let x = 2463534242;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

describe('file hash', () => {
  it("is SHA-256's, over pieces of 4 MB and an odd tail, on this thread and in the worker", async () => {
    // The compiled worker (npm test builds it first): without it fileHash stays on this thread.
    expect(existsSync(worker)).toBe(true);
    const dir = tempDir('ri-hash-');
    const path = join(dir, 'file.bin');
    const content = bytes(9 * 1024 * 1024 + 12_345);
    writeFileSync(path, content);
    const expected = createHash('sha256').update(content).digest('hex').slice(0, 16);
    expect(await contentHash(path)).toBe(expected);
    expect(await hashInWorker(worker, path)).toBe(expected);
    expect(HASH_IN_THREAD_FROM).toBeGreaterThan(content.length); // this size stays on the calling thread
  });

  it('fails in the worker as on this thread when the file cannot be read', async () => {
    const missing = join(tempDir('ri-hash-'), 'missing.bin');
    await expect(contentHash(missing)).rejects.toThrow(/ENOENT/);
    await expect(hashInWorker(worker, missing)).rejects.toThrow(/ENOENT/);
  });

  it('checks a snapshot by its name, and again once its bytes changed', async () => {
    const dir = join(tempDir('ri-hash-'), 'snapshots');
    mkdirSync(dir);
    const content = bytes(100_000);
    const version = createHash('sha256').update(content).digest('hex').slice(0, 16);
    writeFileSync(snapshotFile(dir, version), content);
    expect(await verifySnapshot(dir, version)).toBe(true);
    // The same name over other bytes (a new stamp): checked again, and refused.
    const damaged = Buffer.from(content);
    damaged[50_000] = damaged[50_000]! ^ 0xff;
    writeFileSync(snapshotFile(dir, version), damaged);
    utimesSync(snapshotFile(dir, version), new Date(), new Date(Date.now() + 5_000));
    expect(await verifySnapshot(dir, version)).toBe(false);
  });
});

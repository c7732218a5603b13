import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { releaseFreeMemory } from '../../../src/util/release-memory.js';

/** Whether this process's C library is glibc (Node's report names its version then). */
const glibc = Boolean(
  (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime,
);

/** Resident set of this process, MB. */
const rssMb = () => process.memoryUsage().rss / 2 ** 20;

describe('releaseFreeMemory', () => {
  it.runIf(glibc)('gives back what an ended thread freed into its arena', async () => {
    const before = rssMb();
    // 4,000 buffers of 50 KB each, written: below glibc's mmap threshold, so they come from the
    // thread's arena and stay resident once freed, as the scoring worker's did.
    const worker = new Worker(
      `const kept = [];
       for (let i = 0; i < 4000; i++) new Uint8Array(kept[kept.push(new ArrayBuffer(50000)) - 1]).fill(1);
       require('node:worker_threads').parentPort.postMessage(kept.length);`,
      { eval: true },
    );
    await new Promise((resolve) => worker.once('exit', resolve));
    const kept = rssMb() - before;
    expect(kept).toBeGreaterThan(100); // the allocator kept the thread's memory
    expect(releaseFreeMemory()).toBe(true);
    expect(rssMb() - before).toBeLessThan(kept / 2);
  });
});

import { parentPort } from 'node:worker_threads';
import type { BatchCounts, ExcludedWork, TaggedWork } from './corpus-store.js';
import { ingestFile } from './ingest-file.js';

/**
 * One ingest worker: reads, parses and tags works files and hands batches to the main thread,
 * the only writer of the corpus store (SQLite has one writer at a time; one writer thread
 * avoids lock waits). The main thread hands out one file at a time.
 */
export type ToWorker = { type: 'file'; file: string } | { type: 'written'; batch: number; counts: BatchCounts } | { type: 'done' };
export type FromWorker =
  | { type: 'ready' }
  | { type: 'progress'; file: string; bytes: number; read: number }
  | { type: 'batch'; batch: number; works: TaggedWork[]; excluded: ExcludedWork[]; taggerVersion: number }
  | { type: 'result'; result: Awaited<ReturnType<typeof ingestFile>> };

const port = parentPort!;
const waiting = new Map<number, (c: BatchCounts) => void>();
let nextBatch = 0;
let lastPost = 0;

const post = (msg: FromWorker) => port.postMessage(msg);

port.on('message', async (msg: ToWorker) => {
  if (msg.type === 'done') {
    port.close();
    return;
  }
  if (msg.type === 'written') {
    waiting.get(msg.batch)?.(msg.counts);
    waiting.delete(msg.batch);
    return;
  }
  const file = msg.file;
  const result = await ingestFile(
    (works, excluded, taggerVersion) =>
      new Promise<BatchCounts>((resolve) => {
        const batch = nextBatch++;
        waiting.set(batch, resolve);
        post({ type: 'batch', batch, works, excluded, taggerVersion });
      }),
    file,
    (bytes, counts) => {
      const now = Date.now();
      if (now - lastPost < 200) return;
      lastPost = now;
      post({ type: 'progress', file, bytes, read: counts.read });
    },
  );
  post({ type: 'result', result });
});
post({ type: 'ready' });

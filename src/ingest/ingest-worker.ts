import { parentPort, workerData } from 'node:worker_threads';
import { openCorpusStore } from './corpus-store.js';
import { ingestFile } from './ingest-file.js';

/**
 * One ingest worker: parses and tags works files and writes them to the corpus store itself,
 * so that no records cross threads. The main thread hands out one file at a time.
 */
export type ToWorker = { file: string } | { done: true };
export type FromWorker =
  | { type: 'progress'; file: string; bytes: number; read: number }
  | { type: 'result'; result: Awaited<ReturnType<typeof ingestFile>> }
  | { type: 'ready' };

const store = openCorpusStore((workerData as { storePath: string }).storePath);
const port = parentPort!;
let lastPost = 0;

port.on('message', async (msg: ToWorker) => {
  if ('done' in msg) {
    store.close();
    port.close();
    return;
  }
  const result = await ingestFile(store, msg.file, (bytes, counts) => {
    const now = Date.now();
    if (now - lastPost < 200) return;
    lastPost = now;
    port.postMessage({ type: 'progress', file: msg.file, bytes, read: counts.read } satisfies FromWorker);
  });
  port.postMessage({ type: 'result', result } satisfies FromWorker);
});
port.postMessage({ type: 'ready' } satisfies FromWorker);

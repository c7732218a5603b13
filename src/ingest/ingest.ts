import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { openCorpusStore } from './corpus-store.js';
import { addCounts, type BadLine, type BatchSink, emptyCounts, type FileResult, type IngestCounts, ingestFile } from './ingest-file.js';
import type { FromWorker, ToWorker } from './ingest-worker.js';
import type { WorksFile } from './sources.js';

export interface IngestSummary {
  files: number;
  counts: IngestCounts;
  badLines: BadLine[];
  fileErrors: { file: string; error: string }[];
  seconds: number;
}

export interface IngestProgress {
  /** Compressed bytes read over all files so far, and the total. */
  bytes: number;
  totalBytes: number;
  read: number;
  filesDone: number;
  files: number;
}

export interface IngestOptions {
  /** Worker threads; 0 parses in this thread (used by unit tests that run from sources). */
  workers?: number;
  onProgress?: (p: IngestProgress) => void;
  onFileDone?: (r: FileResult) => void;
}

const WORKER_URL = new URL('./ingest-worker.js', import.meta.url);
// Worker threads need the compiled file; from TypeScript sources (tests) we parse in-process.
const CAN_USE_WORKERS = fileURLToPath(import.meta.url).endsWith('.js');

/** Ingests files into the corpus store at storePath, one file per worker at a time. */
export async function ingest(storePath: string, files: readonly WorksFile[], options: IngestOptions = {}) {
  const started = performance.now();
  const store = openCorpusStore(storePath);
  const workers = CAN_USE_WORKERS ? Math.min(options.workers ?? availableParallelism(), files.length) : 0;
  const summary: IngestSummary = { files: files.length, counts: emptyCounts(), badLines: [], fileErrors: [], seconds: 0 };
  const totalBytes = files.reduce((s, f) => s + f.bytes, 0);
  const doneBytes = { finished: 0, inFlight: new Map<string, number>() };
  const readInFlight = new Map<string, number>();
  let filesDone = 0;

  const progress = () =>
    options.onProgress?.({
      bytes: doneBytes.finished + [...doneBytes.inFlight.values()].reduce((a, b) => a + b, 0),
      totalBytes,
      read: summary.counts.read + [...readInFlight.values()].reduce((a, b) => a + b, 0),
      filesDone,
      files: files.length,
    });
  const finish = (r: FileResult, bytes: number) => {
    addCounts(summary.counts, r.counts);
    for (const b of r.badLines) if (summary.badLines.length < 100) summary.badLines.push(b);
    if (r.error) summary.fileErrors.push({ file: r.file, error: r.error });
    doneBytes.inFlight.delete(r.file);
    readInFlight.delete(r.file);
    doneBytes.finished += bytes;
    filesDone++;
    options.onFileDone?.(r);
    progress();
  };

  const write: BatchSink = (works, excluded, taggerVersion) => store.writeBatch(works, excluded, taggerVersion);
  try {
    if (workers === 0) {
      for (const f of files) {
        const r = await ingestFile(write, f.path, (bytes, counts) => {
          doneBytes.inFlight.set(f.path, bytes);
          readInFlight.set(f.path, counts.read);
          progress();
        });
        finish(r, f.bytes);
      }
    } else {
      const queue = [...files];
      const sizes = new Map(files.map((f) => [f.path, f.bytes]));
      await Promise.all(
        Array.from({ length: workers }, () =>
          runWorker(queue, write, (msg) => {
            if (msg.type === 'progress') {
              doneBytes.inFlight.set(msg.file, msg.bytes);
              readInFlight.set(msg.file, msg.read);
              progress();
            } else if (msg.type === 'result') {
              finish(msg.result, sizes.get(msg.result.file) ?? 0);
            }
          }),
        ),
      );
    }
  } finally {
    store.close();
  }
  summary.seconds = (performance.now() - started) / 1000;
  return summary;
}

/** Runs one worker over the shared queue; its batches are written here, on the store's thread. */
function runWorker(queue: WorksFile[], write: BatchSink, onMessage: (m: FromWorker) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL);
    const send = (msg: ToWorker) => worker.postMessage(msg);
    const next = () => {
      const file = queue.shift();
      send(file ? { type: 'file', file: file.path } : { type: 'done' });
    };
    worker.on('message', async (msg: FromWorker) => {
      if (msg.type === 'ready') next();
      else if (msg.type === 'batch') {
        const counts = await write(msg.works, msg.excluded, msg.taggerVersion);
        send({ type: 'written', batch: msg.batch, counts });
      } else {
        onMessage(msg);
        if (msg.type === 'result') next();
      }
    });
    worker.on('error', reject);
    worker.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`ingest worker exited with ${code}`))));
  });
}

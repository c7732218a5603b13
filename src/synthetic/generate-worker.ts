/**
 * Worker thread for `ri generate`: receives the corpus tables the main thread built (shared memory, not
 * rebuilt here), then writes each part file it is sent (a PartSpec) and answers with its PartResult.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type WorkerInit, type WorkerReply, type WorkerRequest, writePart } from './generate.js';
import { type Corpus, corpusFromShared } from './records.js';

const init = workerData as WorkerInit;
const port = parentPort;
if (!port) throw new Error('generate-worker must run as a worker thread');

let corpus: Corpus | null = null;

port.on('message', (request: WorkerRequest) => {
  if ('corpus' in request) {
    corpus = corpusFromShared(request.corpus);
    return;
  }
  Promise.resolve()
    .then(() => {
      if (!corpus) throw new Error('generate worker: a part before the corpus');
      return writePart(corpus, init.outDir, request.spec);
    })
    .then(
      (result) => port.postMessage({ ok: true, result } satisfies WorkerReply),
      (error: unknown) =>
        port.postMessage({
          ok: false,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        } satisfies WorkerReply),
    );
});

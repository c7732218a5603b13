/**
 * Worker thread for `ri generate`: builds the corpus tables once, then writes each part file it is sent
 * (a PartSpec) and answers with its PartResult.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadTopics, type PartSpec, type WorkerInit, type WorkerReply, writePart } from './generate.js';
import { createCorpus } from './records.js';

const init = workerData as WorkerInit;
const port = parentPort;
if (!port) throw new Error('generate-worker must run as a worker thread');

const corpusReady = loadTopics(init.topicsPath).then((topics) => createCorpus(init.seed, init.works, topics));

port.on('message', (spec: PartSpec) => {
  corpusReady
    .then((corpus) => writePart(corpus, init.outDir, spec))
    .then(
      (result) => port.postMessage({ ok: true, result } satisfies WorkerReply),
      (error: unknown) =>
        port.postMessage({
          ok: false,
          error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        } satisfies WorkerReply),
    );
});

/**
 * Worker thread of title-index.ts: builds the titles' full-text index in its side file, saying
 * when the titles are read (the writer may then write the snapshot again) and when it is done.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { buildTitleIndex, type TitleIndexReply } from './title-index.js';
import type { TopicTermsInput } from './topic-terms.js';

const port = parentPort;
if (!port) throw new Error('title-index-worker must run as a worker thread');
const { snapshotPath, sidePath, topics } = workerData as {
  snapshotPath: string;
  sidePath: string;
  topics?: TopicTermsInput;
};
let reply: TitleIndexReply;
try {
  buildTitleIndex(
    snapshotPath,
    sidePath,
    () => port.postMessage({ titlesRead: true } satisfies TitleIndexReply),
    topics,
  );
  reply = { ok: true };
} catch (error) {
  reply = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
port.postMessage(reply);

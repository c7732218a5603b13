/**
 * Worker thread of title-index.ts: builds the titles' full-text index or the topic model in its
 * side file, saying
 * when the titles are read (the writer may then write the snapshot again) and when it is done.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { buildIndex, buildTopicTermsFile, type TitleIndexJob, type TitleIndexReply } from './title-index.js';

const port = parentPort;
if (!port) throw new Error('title-index-worker must run as a worker thread');
const job = workerData as TitleIndexJob;
const titlesRead = () => port.postMessage({ titlesRead: true } satisfies TitleIndexReply);
let reply: TitleIndexReply;
try {
  if (job.job === 'index') buildIndex(job.snapshotPath, job.sidePath, titlesRead);
  else buildTopicTermsFile(job.snapshotPath, job.sidePath, titlesRead, job.topics);
  reply = { ok: true };
} catch (error) {
  reply = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
port.postMessage(reply);

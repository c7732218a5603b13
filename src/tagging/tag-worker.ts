/** Worker thread of tag-titles.ts: tags the titles it is started with and answers once. */
import { parentPort, workerData } from 'node:worker_threads';
import { type TagReply, tagTitles } from './tag-titles.js';

const port = parentPort;
if (!port) throw new Error('tag-worker must run as a worker thread');
let reply: TagReply;
try {
  reply = { ok: true, symbols: tagTitles((workerData as { titles: (string | null)[] }).titles) };
} catch (error) {
  reply = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
port.postMessage(reply);

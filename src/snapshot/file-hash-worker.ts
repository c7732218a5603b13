/** Worker thread of file-hash.ts: hashes the file it is started with and answers once. */
import { parentPort, workerData } from 'node:worker_threads';
import { contentHash, type HashReply } from './file-hash.js';

const port = parentPort;
if (!port) throw new Error('file-hash-worker must run as a worker thread');
let reply: HashReply;
try {
  reply = { ok: true, hash: await contentHash((workerData as { path: string }).path) };
} catch (error) {
  reply = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
port.postMessage(reply);

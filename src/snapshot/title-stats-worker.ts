/**
 * Worker thread of title-stats.ts: reads one snapshot's title statistics on its own connection
 * and answers once, moving the token counts instead of copying them.
 */
import { type MessagePort, workerData } from 'node:worker_threads';
import { type TitleStatsReply, titleStatsOfFile } from './title-stats.js';

const { path, port } = workerData as { path: string; port: MessagePort };
let reply: TitleStatsReply;
try {
  reply = { ok: true, stats: titleStatsOfFile(path) };
} catch (error) {
  reply = { ok: false, error: error instanceof Error ? error.message : String(error) };
}
port.postMessage(reply, reply.ok ? [reply.stats.tokens.buffer as ArrayBuffer] : []);
port.close();

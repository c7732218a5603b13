/**
 * Worker thread of the build (score-subjects.ts): scores the subjects of the corpus it is
 * started with and answers once, moving the result's typed columns instead of copying them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import {
  type ScoringReply,
  type ScoringTask,
  scoreSubjects,
  transferablesOfScored,
} from './score-subjects.js';

const port = parentPort;
if (!port) throw new Error('score-worker must run as a worker thread');
const { corpus, impact, params } = workerData as ScoringTask;
let reply: ScoringReply;
try {
  reply = { ok: true, result: scoreSubjects(corpus, impact, params) };
} catch (error) {
  reply = { ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}
port.postMessage(reply, reply.ok ? transferablesOfScored(reply.result) : []);

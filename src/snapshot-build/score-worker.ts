/**
 * Worker thread of the build (score-subjects.ts): scores the subjects of the corpus it is
 * started with, posting each type's rows as they are done and then the result, moving their
 * typed columns instead of copying them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import {
  awaitRanks,
  type ScoringReply,
  type ScoringTask,
  scoreSubjects,
  transferablesOfScored,
} from './score-subjects.js';
import { type SubjectRows, transferablesOf } from './subject-rows.js';

const port = parentPort;
if (!port) throw new Error('score-worker must run as a worker thread');
const { corpus, impact, params, ranks } = workerData as ScoringTask;
let reply: ScoringReply;
try {
  // Each type's rows go as soon as they are laid out (moved, not copied).
  const onRows = (rows: SubjectRows) =>
    port.postMessage({ rows } satisfies ScoringReply, transferablesOf(rows));
  reply = { ok: true, result: scoreSubjects(corpus, impact, params, onRows, () => awaitRanks(ranks)) };
} catch (error) {
  reply = { ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}
port.postMessage(reply, reply.ok ? transferablesOfScored(reply.result) : []);

import type { LabDepth } from '../access/policy.js';
import type { SharedColumns } from '../snapshot/paper-columns.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { compressSync, type Encoding, MIN_COMPRESS_BYTES } from '../util/compression.js';
import { jsonRpcResponse, toolResultJson } from './answer-text.js';
import { type LabQuote, type LabRunAnswer, labQuote, labRun } from './lab.js';
import { withOwnNotes } from './reading-notes.js';
import { rehearse } from './research/rehearsal.js';
import { type ResearchAnswer, type ResearchRequest, research, warmResearch } from './research.js';
import type { Viewer } from './viewer.js';

/**
 * The answers that take milliseconds of CPU at scale (research, lab quotes and runs), as plain
 * data in and out, so they can run in a worker thread as well as in this one (worker-pool.ts).
 */
export type WorkerTask =
  | { kind: 'research'; request: ResearchRequest; viewer: Viewer }
  /**
   * The research answer as its JSON text (a string crosses the thread at a fraction of an object's
   * cost), with its page count beside it for the caller, which sells pages (researchPage).
   */
  | { kind: 'researchJson'; request: ResearchRequest; viewer: Viewer }
  /**
   * The research answer as the JSON of an MCP tool result (its own notes, structured and as text),
   * written in the worker, as researchJson is for REST.
   */
  | { kind: 'researchTool'; request: ResearchRequest; viewer: Viewer; envelope?: ResponseEnvelope }
  | { kind: 'labQuote'; input: string; viewer: Viewer; secret: string; ttlSeconds: number; nowMs: number }
  | { kind: 'labRun'; quote: LabQuote; depth: LabDepth; viewer: Viewer }
  /**
   * Reads what research keeps per snapshot before the first question needs it (warmResearch);
   * with `share`, into shared memory, and answers with it for the other workers.
   */
  | { kind: 'warm'; share?: boolean }
  /**
   * Asks research's rehearsal question number `index` (research/rehearsal.ts), so the worker's
   * code is compiled before real questions come; one question per task, so they never wait long.
   */
  | { kind: 'rehearse'; index: number }
  /** Reads the snapshot's meta table: whether a worker can answer from this snapshot now (/readyz). */
  | { kind: 'probe' };

export type WorkerAnswer =
  | ResearchAnswer
  | ResearchJson
  | LabQuote
  | LabRunAnswer
  | string
  | { columns: SharedColumns };

/** A research answer as JSON text, and its page count. */
export interface ResearchJson {
  json: string;
  pages: number;
  /**
   * The whole JSON-RPC response compressed, when the task named its envelope: made where the
   * result was written, so the main thread neither compresses it nor sends it to libuv's pool.
   */
  body?: Uint8Array;
}

/** The JSON-RPC response a tool result goes into (its request's id) and the encoding to send it in. */
export interface ResponseEnvelope {
  id: string | number;
  encoding: Encoding;
}

/** Runs a task over a snapshot: the same core functions, wherever it runs. */
export function runWorkerTask(snapshot: Snapshot, task: WorkerTask): WorkerAnswer {
  switch (task.kind) {
    case 'research':
      return research(snapshot, task.request, task.viewer);
    case 'researchJson': {
      const answer = research(snapshot, task.request, task.viewer);
      return { json: JSON.stringify(answer), pages: answer.pages };
    }
    case 'researchTool': {
      const answer = withOwnNotes(research(snapshot, task.request, task.viewer), snapshot, task.viewer);
      const json = toolResultJson(answer);
      if (!task.envelope) return { json, pages: answer.pages };
      const response = Buffer.from(jsonRpcResponse(json, task.envelope.id));
      if (response.length < MIN_COMPRESS_BYTES) return { json, pages: answer.pages };
      return { json, pages: answer.pages, body: compressSync(response, task.envelope.encoding) };
    }
    case 'labQuote': {
      const now = new Date(task.nowMs);
      return labQuote(snapshot, task.input, task.viewer, {
        secret: task.secret,
        ttlSeconds: task.ttlSeconds,
        now: () => now,
      });
    }
    case 'labRun':
      return labRun(snapshot, task.quote, task.depth, task.viewer);
    case 'warm': {
      const columns = warmResearch(snapshot, task.share);
      return columns ? { columns } : 'warm';
    }
    case 'rehearse':
      return rehearse(snapshot, task.index);
    case 'probe':
      snapshot.reader.meta();
      return 'ok';
  }
}

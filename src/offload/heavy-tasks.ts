import type { LabDepth } from '../access/policy.js';
import { toolResultJson } from '../core/answer-text.js';
import { ServiceError } from '../core/errors.js';
import { type LabQuote, type LabRunAnswer, labQuote, labRun } from '../core/lab.js';
import { withOwnNotes } from '../core/reading-notes.js';
import { type ResearchAnswer, type ResearchRequest, research, warmResearch } from '../core/research.js';
import type { Viewer } from '../core/viewer.js';
import type { SharedColumns } from '../snapshot/paper-columns.js';
import type { Snapshot } from '../snapshot/snapshot.js';

/**
 * The answers that take milliseconds of CPU at scale (research, lab quotes and runs), as plain
 * data in and out, so they can run in a worker thread as well as in this one.
 */
export type HeavyTask =
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
  | { kind: 'researchTool'; request: ResearchRequest; viewer: Viewer }
  | { kind: 'labQuote'; input: string; viewer: Viewer; secret: string; ttlSeconds: number; nowMs: number }
  | { kind: 'labRun'; quote: LabQuote; depth: LabDepth; viewer: Viewer }
  /**
   * Reads what research keeps per snapshot before the first question needs it (warmResearch);
   * with `share`, into shared memory, and answers with it for the other workers.
   */
  | { kind: 'warm'; share?: boolean }
  /** Reads the snapshot's meta table: whether a worker can answer from this snapshot now (/readyz). */
  | { kind: 'probe' };

export type HeavyAnswer =
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
}

/** Runs a task over a snapshot: the same core functions, wherever it runs. */
export function runHeavyTask(snapshot: Snapshot, task: HeavyTask): HeavyAnswer {
  switch (task.kind) {
    case 'research':
      return research(snapshot, task.request, task.viewer);
    case 'researchJson': {
      const answer = research(snapshot, task.request, task.viewer);
      return { json: JSON.stringify(answer), pages: answer.pages };
    }
    case 'researchTool': {
      const answer = withOwnNotes(research(snapshot, task.request, task.viewer), snapshot, task.viewer);
      return { json: toolResultJson(answer), pages: answer.pages };
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
    case 'probe':
      snapshot.reader.meta();
      return 'ok';
  }
}

/** A ServiceError as data (a worker's errors cross the thread as plain objects). */
export interface ServiceErrorData {
  serviceError: {
    code: ServiceError['code'];
    detail: string;
    extra: Record<string, unknown>;
    headers: Record<string, string>;
  };
}

export const toData = (e: ServiceError): ServiceErrorData => ({
  serviceError: { code: e.code, detail: e.detail, extra: e.extra, headers: e.headers },
});

export const fromData = (d: ServiceErrorData['serviceError']): ServiceError =>
  new ServiceError(d.code, d.detail, d.extra, d.headers);

/**
 * Any other error of a task, as data. Thrown as it is, it would cross the thread as a plain
 * object (a SqliteError loses its class and message), which the HTTP layer cannot answer.
 */
export interface WorkerFailureData {
  workerFailure: { message: string; code?: string; stack?: string };
}

export function toFailureData(e: unknown): WorkerFailureData {
  const err = e as { message?: unknown; code?: unknown; stack?: unknown } | null;
  return {
    workerFailure: {
      message: typeof err?.message === 'string' ? err.message : String(e),
      ...(typeof err?.code === 'string' ? { code: err.code } : {}),
      ...(typeof err?.stack === 'string' ? { stack: err.stack } : {}),
    },
  };
}

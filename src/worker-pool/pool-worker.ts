/**
 * A thread of the research and lab worker pool (piscina). It opens the snapshot files it is asked
 * about read-only and keeps the last few open (a new publication brings a new file; the old ones are
 * closed as they fall out, or once unused for IDLE_CLOSE_MS), so it follows snapshot switches
 * without being told. Each is known by its path and the identity of the file the main thread
 * opened there, so a file quarantined and rewritten under the same name is opened anew.
 */
import { ServiceError } from '../core/errors.js';
import { runWorkerTask, type WorkerAnswer, type WorkerTask } from '../core/worker-tasks.js';
import { adoptPaperColumns, type SharedColumns } from '../snapshot/paper-columns.js';
import { isCorruption, Snapshot } from '../snapshot/snapshot.js';
import { type ServiceErrorData, toData, toFailureData, type WorkerFailureData } from './errors-as-data.js';

// Each worker holds its own connections: few, with a small page cache (the OS page cache and the
// mmap are shared with the main thread), so workers add little to the process's memory.
const KEEP_OPEN = 2;
const WORKER_CACHE_KIB = 8_192;
/**
 * A snapshot no task has asked about for this long (the one served before a publication) is
 * closed at the next task, with its page cache and what was derived from it (the lab index, the
 * prepared statements), rather than kept until a second publication pushes it out.
 */
export const IDLE_CLOSE_MS = 30_000;
/**
 * The open snapshots by file path and file identity, least recently used first, each with when a
 * task last asked for it.
 */
const open = new Map<string, { snapshot: Snapshot; lastUsed: number }>();

function closeIdle(except: string, now: number): void {
  for (const [key, entry] of open) {
    if (key === except || now - entry.lastUsed < IDLE_CLOSE_MS) continue;
    open.delete(key);
    entry.snapshot.retire();
  }
}

function snapshotAt(key: string, path: string, version: string, checkedPages: boolean): Snapshot {
  const now = Date.now();
  closeIdle(key, now);
  const kept = open.get(key);
  // Deleted and set again: most recently used last.
  open.delete(key);
  const snapshot =
    kept?.snapshot ?? new Snapshot(version, path, { cacheKib: WORKER_CACHE_KIB, mmap: false, checkedPages });
  open.set(key, { snapshot, lastUsed: now });
  while (open.size > KEEP_OPEN) {
    const [oldest, entry] = open.entries().next().value as [string, { snapshot: Snapshot }];
    open.delete(oldest);
    entry.snapshot.retire();
  }
  return snapshot;
}

/** The pool's task (piscina calls it by name). */
export function task(input: {
  path: string;
  version: string;
  /** The main thread's Snapshot.file: which file at `path` it opened and verified. */
  file?: string;
  /** Whether the main thread's connection checks its pages (the worker's must then too). */
  checkedPages?: boolean;
  task: WorkerTask;
  /** The snapshot's columns another worker read into shared memory, when there are. */
  columns?: SharedColumns;
}): WorkerAnswer | ServiceErrorData | WorkerFailureData {
  const key = `${input.path}\0${input.file ?? ''}`;
  try {
    const snapshot = snapshotAt(key, input.path, input.version, input.checkedPages ?? false);
    if (input.columns) adoptPaperColumns(snapshot, input.columns);
    return runWorkerTask(snapshot, input.task);
  } catch (e) {
    if (e instanceof ServiceError) return toData(e);
    // A damaged file is not read again through this connection: the next task opens the path anew.
    if (isCorruption(e)) {
      const entry = open.get(key);
      open.delete(key);
      entry?.snapshot.retire();
    }
    return toFailureData(e);
  }
}

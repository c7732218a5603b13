/**
 * A worker thread of the heavy-work pool (piscina). It opens the snapshot files it is asked about
 * read-only and keeps the last few open (a new publication brings a new file; the old ones are
 * closed as they fall out, or once unused for IDLE_CLOSE_MS), so it follows snapshot switches
 * without being told.
 */
import { ServiceError } from '../core/errors.js';
import { Snapshot } from '../snapshot/snapshot.js';
import {
  type HeavyAnswer,
  type HeavyTask,
  runHeavyTask,
  type ServiceErrorData,
  toData,
} from './heavy-tasks.js';

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
const open = new Map<string, Snapshot>();
const lastUsed = new Map<string, number>();

function closeIdle(except: string, now: number): void {
  for (const [path, snapshot] of open) {
    if (path === except || now - (lastUsed.get(path) ?? now) < IDLE_CLOSE_MS) continue;
    open.delete(path);
    lastUsed.delete(path);
    snapshot.retire();
  }
}

function snapshotAt(path: string, version: string): Snapshot {
  const now = Date.now();
  closeIdle(path, now);
  lastUsed.set(path, now);
  let s = open.get(path);
  if (s) {
    open.delete(path);
    open.set(path, s); // most recently used last
    return s;
  }
  s = new Snapshot(version, path, { cacheKib: WORKER_CACHE_KIB, mmap: false });
  open.set(path, s);
  while (open.size > KEEP_OPEN) {
    const [oldest, snapshot] = open.entries().next().value as [string, Snapshot];
    open.delete(oldest);
    lastUsed.delete(oldest);
    snapshot.retire();
  }
  return s;
}

/** The pool's task (piscina calls it by name). */
export function task(input: {
  path: string;
  version: string;
  task: HeavyTask;
}): HeavyAnswer | ServiceErrorData {
  try {
    return runHeavyTask(snapshotAt(input.path, input.version), input.task);
  } catch (e) {
    if (e instanceof ServiceError) return toData(e);
    throw e;
  }
}

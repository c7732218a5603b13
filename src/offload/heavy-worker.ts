/**
 * A worker thread of the heavy-work pool (piscina). It opens the snapshot files it is asked about
 * read-only and keeps the last few open (a new publication brings a new file; the old ones are
 * closed as they fall out), so it follows snapshot switches without being told.
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
const open = new Map<string, Snapshot>();

function snapshotAt(path: string, version: string): Snapshot {
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

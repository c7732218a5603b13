import type { Snapshot } from '../snapshot/snapshot.js';
import { runWorkerTask, type WorkerAnswer, type WorkerTask } from './worker-tasks.js';

/**
 * Where research and lab work runs: in this thread (`inThread`), or in a pool of worker threads
 * (`src/worker-pool/`, which implements this interface, so the core never imports it).
 */
export interface WorkerPool {
  run<T extends WorkerAnswer>(snapshot: Snapshot, task: WorkerTask): Promise<T>;
  /**
   * Has each worker read what research keeps per snapshot, before questions come (about a second
   * at 1M works, which the first question on each worker would wait otherwise), then rehearse
   * research (research/rehearsal.ts) so its code is compiled before the first questions. In this
   * thread it does nothing: the event loop must not stop for it.
   */
  warm(snapshot: Snapshot): Promise<void>;
  /**
   * Whether a research or lab question on `snapshot` could be answered now: null when it could,
   * else why not (for /readyz). In this thread, always null: the thread that answers is this one.
   */
  probe(snapshot: Snapshot): Promise<string | null>;
  /** Queue length, threads, the bytes of columns the workers share, rehearsal questions asked. */
  stats(): { queued: number; threads: number; sharedColumnBytes: number; rehearsed: number };
  close(): Promise<void>;
}

/** In this thread (tests, and servers configured with WORKER_THREADS=0). */
export const inThread: WorkerPool = {
  async run<T extends WorkerAnswer>(snapshot: Snapshot, task: WorkerTask) {
    return runWorkerTask(snapshot, task) as T;
  },
  warm: async () => {},
  probe: async () => null,
  stats: () => ({ queued: 0, threads: 0, sharedColumnBytes: 0, rehearsed: 0 }),
  close: async () => {},
};

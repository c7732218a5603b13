import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Piscina } from 'piscina';
import { ServiceError } from '../core/errors.js';
import type { WorkerPool } from '../core/worker-pool.js';
import type { WorkerAnswer, WorkerTask } from '../core/worker-tasks.js';
import type { SharedColumns } from '../snapshot/paper-columns.js';
import { TITLE_RANKING_FROM } from '../snapshot/reader.js';
import { isCorruption, type Snapshot } from '../snapshot/snapshot.js';
import { workerFile } from '../util/worker-file.js';
import { fromData, type ServiceErrorData, toFailureData, type WorkerFailureData } from './errors-as-data.js';

export interface PoolOptions {
  /** Worker threads (default: the cores less one, at least 1, at most 4). */
  threads?: number;
  /** Tasks waiting beyond the threads; past it, 503 overloaded. */
  maxQueue?: number;
  /** How long a task may wait and run; past it, 503 overloaded. */
  deadlineMs?: number;
  /** Where a worker's failure is logged (the answer says only that it failed). */
  log?: (msg: string, fields: Record<string, unknown>) => void;
  /**
   * Snapshots of at least this many papers are rehearsed after they are warmed (default: from
   * where research ranks titles itself; below it a question takes a few milliseconds and its
   * compilation is not worth a rehearsal at every start).
   */
  rehearseFromPapers?: number;
}

/** How long a rehearsal waits for the titles' statistics (a few seconds at 1M works) before it gives up. */
const REHEARSAL_WAIT_MS = 120_000;

const defaultThreads = () => Math.max(1, Math.min(4, availableParallelism() - 1));

const overloaded = (why: string) =>
  new ServiceError(
    'overloaded',
    `The server is too busy to answer this now (${why}); try again shortly.`,
    {},
    { 'retry-after': '2' },
  );

/**
 * A worker that could not answer (its thread died, or its task threw): the
 * client's request was sound, so a temporary 503, never a 400 or a 500; the cause goes to the log.
 */
const workerUnavailable = () =>
  new ServiceError(
    'worker_unavailable',
    'The research and lab workers could not answer this; try again shortly.',
    {},
    { 'retry-after': '2' },
  );

/** Which file of a snapshot (its path and the identity the main thread opened), as the workers key theirs. */
const fileOf = (snapshot: Snapshot) => `${snapshot.path}\0${snapshot.file}`;

/**
 * Research and lab answers in worker threads, so a slow question never holds up the cached reads
 * on the event loop. Bounded: a full queue or a task past its deadline is a 503 `overloaded` with
 * Retry-After (never charged: no answer is given). A task that meets a damaged snapshot fails as
 * in this thread (an Error with SQLite's code: 503 `data_unavailable`, and the file is checked);
 * any other failure of a worker is a 503 `worker_unavailable`.
 */
export function workerPool(options: PoolOptions = {}): WorkerPool {
  const threads = options.threads ?? defaultThreads();
  const maxQueue = options.maxQueue ?? 64;
  const deadlineMs = options.deadlineMs ?? 10_000;
  const log = options.log ?? (() => {});
  const rehearseFrom = options.rehearseFromPapers ?? TITLE_RANKING_FROM;
  const pool = new Piscina({
    filename: workerFile(import.meta.url, './pool-worker.js'),
    minThreads: threads,
    maxThreads: threads,
    maxQueue,
    idleTimeout: Number.POSITIVE_INFINITY,
    // A worker's heap is mostly garbage between tasks. The young generation holds one question's
    // garbage (its match lists, a few MB), so it dies there: with 4 MB it outlived two scavenges
    // and was promoted, and collecting it cost a fifth of a question's CPU (bench/results/scale-history.md); the
    // old generation is kept small so V8 collects it early rather than grow the process's memory.
    resourceLimits: { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 256 },
  });
  // Research's columns of the snapshot warmed last, in shared memory: every task for it carries
  // them, so the workers hold one copy between them (a task for another version reads its own).
  // Known by the file they were read from: a file rewritten under the same version (after damage)
  // never gets columns read from the old one.
  let shared: { file: string; columns: SharedColumns } | null = null;
  // While one worker reads them, tasks for that snapshot wait (at most about a second at 1M
  // works, within their deadline) rather than each worker reading a copy of its own meanwhile.
  let sharing: { file: string; done: Promise<void> } | null = null;
  const input = (snapshot: Snapshot, task: WorkerTask) => ({
    path: snapshot.path,
    version: snapshot.version,
    file: snapshot.file,
    checkedPages: snapshot.pagesChecked,
    task,
    ...(shared?.file === fileOf(snapshot) ? { columns: shared.columns } : {}),
  });
  const failed = (task: WorkerTask, cause: WorkerFailureData['workerFailure']) => {
    log('research or lab worker failed', { task: task.kind, err: cause.message, stack: cause.stack });
    return workerUnavailable();
  };
  const attempt = async (snapshot: Snapshot, task: WorkerTask, ms: number): Promise<WorkerAnswer> => {
    if (pool.queueSize >= maxQueue) throw overloaded('the queue is full');
    let out: WorkerAnswer | ServiceErrorData | WorkerFailureData;
    const signal = AbortSignal.timeout(ms);
    try {
      if (sharing?.file === fileOf(snapshot)) await sharing.done;
      out = await pool.run(input(snapshot, task), { name: 'task', signal });
    } catch (e) {
      const err = e as { name?: unknown; message?: unknown } | null;
      if (err?.name === 'AbortError' || err?.name === 'TimeoutError')
        throw overloaded(`no answer within ${ms / 1000} s`);
      if (typeof err?.message === 'string' && /queue is at limit/i.test(err.message))
        throw overloaded('the queue is full');
      throw failed(task, toFailureData(e).workerFailure);
    }
    if (out && typeof out === 'object' && 'serviceError' in out) throw fromData(out.serviceError);
    if (out && typeof out === 'object' && 'workerFailure' in out) {
      const f = out.workerFailure;
      // Answered as in this thread (app.ts onError): 503 data_unavailable, and the file checked now.
      if (isCorruption(f)) throw Object.assign(new Error(f.message), { code: f.code });
      throw failed(task, f);
    }
    return out as WorkerAnswer;
  };
  // The snapshot whose rehearsal runs (core/research/rehearsal.ts): a newer one stops it.
  let rehearsing: string | null = null;
  /** The rehearsal questions asked for the snapshot warmed last, by every worker. */
  let rehearsed = 0;
  /**
   * Research's rehearsal questions, one task each (a real question waits behind one of them at
   * most), asked once the titles' statistics are read. One such chain per worker: a busy worker
   * takes no second task, so each worker compiles research's code with about a chain's questions.
   */
  const rehearsal = async (snapshot: Snapshot) => {
    const giveUp = Date.now() + REHEARSAL_WAIT_MS;
    for (let index = 0; rehearsing === snapshot.version; ) {
      const out = await pool.run(input(snapshot, { kind: 'rehearse', index }), { name: 'task' });
      if (out === 'asked') {
        index++;
        if (rehearsing === snapshot.version) rehearsed++;
      } else if (out === 'later' && Date.now() < giveUp) await sleep(250);
      else return;
    }
  };
  // One probe at a time per snapshot: /readyz asked often does not fill the queue with them.
  let probing: { snapshot: Snapshot; done: Promise<string | null> } | null = null;
  return {
    async run<T extends WorkerAnswer>(snapshot: Snapshot, task: WorkerTask): Promise<T> {
      return (await attempt(snapshot, task, deadlineMs)) as T;
    },
    probe(snapshot) {
      if (probing?.snapshot === snapshot) return probing.done;
      // Within a question's deadline: not answered by then is what a question would get (503).
      const done = attempt(snapshot, { kind: 'probe' }, deadlineMs).then(
        () => null,
        (e: Error) =>
          `the research and lab workers do not answer from snapshot ${snapshot.version} (${(e as { code?: string }).code}): ${e.message}`,
      );
      const mine = { snapshot, done };
      probing = mine;
      void done.finally(() => {
        if (probing === mine) probing = null;
      });
      return done;
    },
    warm(snapshot) {
      // One worker reads the columns into shared memory (with one worker, there is no one to
      // share with: it reads them as its own, without the copy); then one task each for the
      // others (a busy worker takes no second task, so each lands on its own worker; when one
      // does not, that worker takes the shared columns with its first question).
      const warmTask = (share: boolean) =>
        pool.run(input(snapshot, { kind: 'warm', share }), { name: 'task' }) as Promise<
          WorkerAnswer | ServiceErrorData
        >;
      const done = warmTask(threads > 1).then(
        (out) => {
          if (out && typeof out === 'object' && 'columns' in out)
            shared = { file: fileOf(snapshot), columns: out.columns };
        },
        () => {},
      );
      sharing = { file: fileOf(snapshot), done };
      rehearsing = Number(snapshot.meta.corpus_papers ?? 0) >= rehearseFrom ? snapshot.version : null;
      rehearsed = 0;
      return done
        .then(() => Promise.all(Array.from({ length: threads - 1 }, () => warmTask(false))))
        .then(() => Promise.all(Array.from({ length: threads }, () => rehearsal(snapshot))))
        .then(
          () => {},
          () => {},
        );
    },
    stats: () => ({
      queued: pool.queueSize,
      threads: pool.threads.length,
      sharedColumnBytes: Object.values(shared?.columns ?? {}).reduce((n, b) => n + b.byteLength, 0),
      rehearsed,
    }),
    close: () => {
      rehearsing = null;
      return pool.destroy();
    },
  };
}

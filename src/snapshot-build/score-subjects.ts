import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ELEMENTS } from '../elements/elements.js';
import { scoreCommunities } from '../scoring/communities.js';
import type { Corpus, Csr } from '../scoring/corpus.js';
import type { PaperImpact } from '../scoring/impact.js';
import type { ScoringParameters } from '../scoring/parameters.js';
import { RESOLUTIONS, type Resolution } from '../scoring/resolutions.js';
import {
  buildContext,
  globalRankPositions,
  invert,
  type PeriodTotals,
  periodTotals,
  scoreEntities,
} from '../scoring/score-entities.js';
import type { ScoringContext, Window } from '../scoring/scoring-context.js';
import { inSharedMemory } from '../util/shared-memory.js';
import { type CommunityRows, communityRows, type SubjectRows, SubjectRowsBuilder } from './subject-rows.js';

/**
 * The order subjects are scored and handed over in, a type at a time: the key order of the
 * subject tables (type, then id), so the writer appends each type's rows as they come.
 */
const SCORING_ORDER = ['element', 'keyword', 'topic'] as const;

/**
 * What the snapshot needs from scoring, besides the per-paper impact, the communities and the
 * subjects' rows (handed over a type at a time, SCORING_ORDER), ready to write.
 */
export interface ScoredSubjects {
  /** Subjects scored, of every type. */
  count: number;
  periods: PeriodTotals[];
  /** Each paper's position in the global ranking order (ranking rule of docs/metrics.md). */
  rankPosition: Int32Array;
  /** Each paper's recency weight at the cut-off (the RIS term), 0 without a date. */
  recencyNow: Float64Array;
  window: Window;
  /** Seconds the scoring took (on the worker thread, in a build), for the build's log. */
  seconds: number;
}

/**
 * Scores every element, keyword and topic (SCORING_ORDER); each type's rows go to `onRows` as
 * soon as they are laid out (the build's writer writes them while the next type is scored).
 */
export function scoreSubjects(
  corpus: Corpus,
  impact: PaperImpact,
  params: ScoringParameters,
  onRows: (rows: SubjectRows) => void,
  rankPositions?: () => Int32Array,
): ScoredSubjects {
  const started = performance.now();
  const ctx = buildContext(corpus, impact, params, rankPositions);
  const types = {
    element: { csr: corpus.elements, entities: ELEMENTS.length, res: ['yearly', 'monthly', 'daily'] },
    keyword: { csr: corpus.keywords, entities: corpus.keywordSlugs.length, res: ['yearly', 'monthly'] },
    topic: { csr: corpus.topics, entities: corpus.topicIds.length, res: ['yearly', 'monthly'] },
  } as const;
  let count = 0;
  for (const [at, type] of SCORING_ORDER.entries()) {
    const { csr, entities, res } = types[type];
    const keys = Array.from({ length: entities }, (_, i) => i);
    const inverted = invert(csr, corpus.n, entities); // one inversion for the scores and the postings
    const rows = new SubjectRowsBuilder(corpus);
    rows.add(type, csr, entities, scoreEntities(ctx, type, csr, keys, res, inverted), inverted);
    const done = rows.finish();
    count += done.count;
    onRows(done);
    // A resolution no type after this one reads is let go (the daily columns, 117 MB at 10M works,
    // are the elements' alone and were held through the keywords' scoring, the peak).
    const later = SCORING_ORDER.slice(at + 1).flatMap((t): readonly Resolution[] => types[t].res);
    for (const r of RESOLUTIONS) if (!later.includes(r)) releaseResolution(ctx, r);
  }
  return {
    count,
    periods: periodTotals(ctx),
    rankPosition: ctx.rankPosition,
    recencyNow: ctx.recencyNow,
    window: ctx.window,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Lets go of one resolution's per-paper columns (no type scored after reads them). */
function releaseResolution(ctx: ScoringContext, r: Resolution): void {
  ctx.periodKey[r] = new Int32Array(0);
  ctx.periodRecency[r] = new Float64Array(0);
}

/** The communities' rows: scored beside the subjects, on the thread that writes the paper rows. */
export function scoreCommunityRows(
  corpus: Corpus,
  params: ScoringParameters,
): { communities: CommunityRows; elementCommunities: CommunityRows } {
  const { communities, elementCommunities } = scoreCommunities(corpus, params);
  return { communities: communityRows(communities), elementCommunities: communityRows(elementCommunities) };
}

/** The buffers of a result that move to the receiving thread instead of being copied. */
export function transferablesOfScored(s: ScoredSubjects): ArrayBuffer[] {
  // Ranking positions the build's other thread made are shared, not moved.
  return [s.rankPosition.buffer, s.recencyNow.buffer].filter(
    (b): b is ArrayBuffer => !(b instanceof SharedArrayBuffer),
  );
}

/**
 * Puts in shared memory, in place and one column at a time (the peak is one column's copy), every
 * typed column of the corpus and the impact, and both halves of each CSR. The writer on this
 * thread reads the same ones.
 */
export function shareColumns(corpus: Corpus, impact: PaperImpact): void {
  for (const owner of [corpus, impact] as unknown as Record<string, unknown>[]) {
    for (const [key, value] of Object.entries(owner)) {
      if (ArrayBuffer.isView(value)) owner[key] = inSharedMemory(value);
      else if (isCsr(value))
        owner[key] = { start: inSharedMemory(value.start), values: inSharedMemory(value.values) };
    }
  }
}

const isCsr = (v: unknown): v is Csr =>
  typeof v === 'object' &&
  v !== null &&
  ArrayBuffer.isView((v as Csr).start) &&
  ArrayBuffer.isView((v as Csr).values);

/** The message a scoring worker is started with. */
export interface ScoringTask {
  corpus: Corpus;
  impact: PaperImpact;
  params: ScoringParameters;
  ranks: SharedRanks;
}

/**
 * The ranking positions, made by the thread that starts the worker while the worker begins to
 * score (it needs them only for the top papers): `state` 0 while they are made, 1 once ready,
 * 2 if making them failed.
 */
export interface SharedRanks {
  state: Int32Array;
  positions: Int32Array;
}

/** The positions once the other thread has made them (waiting for them meanwhile). */
export function awaitRanks(ranks: SharedRanks): Int32Array {
  Atomics.wait(ranks.state, 0, 0);
  if (Atomics.load(ranks.state, 0) !== 1) throw new Error('the ranking positions could not be made');
  return ranks.positions;
}

export type ScoringReply =
  | { rows: SubjectRows }
  | { ok: true; result: ScoredSubjects }
  | { ok: false; error: string };

/**
 * Scoring running beside the caller: each type's rows (SCORING_ORDER) as they are done, the
 * result, and a way to stop it when the build fails.
 */
export interface ScoringAside {
  /** Each type's rows once: nothing here keeps them after they are taken (the writer frees them). */
  rows: AsyncIterable<SubjectRows>;
  result: Promise<ScoredSubjects>;
  stop(): void;
}

/**
 * The rows of each type, handed from the scoring to the writer through slots that are emptied as
 * they are filled and taken, so no type's rows outlive their writing (at 10M works the three
 * types' rows, kept to the end of the build, were 0.7 GB of its peak).
 */
function rowsHandover(): {
  rows: AsyncIterable<SubjectRows>;
  hand: (rows: SubjectRows) => void;
  fail: (e: unknown) => void;
} {
  const settlers: ({ resolve: (rows: SubjectRows) => void; reject: (e: unknown) => void } | undefined)[] = [];
  const slots: (Promise<SubjectRows> | undefined)[] = SCORING_ORDER.map((_, i) => {
    const promise = new Promise<SubjectRows>((resolve, reject) => {
      settlers[i] = { resolve, reject };
    });
    promise.catch(() => {}); // taken by the writer; a failure before then is the result's to report
    return promise;
  });
  let next = 0;
  return {
    rows: {
      async *[Symbol.asyncIterator]() {
        for (let i = 0; i < slots.length; i++) {
          const slot = slots[i]!;
          slots[i] = undefined;
          yield await slot;
        }
      },
    },
    hand: (rows) => {
      settlers[next]?.resolve(rows);
      settlers[next++] = undefined;
    },
    fail: (e) => {
      for (const s of settlers) s?.reject(e);
    },
  };
}

/** The worker's file, beside this one once compiled; from the sources (tests) there is none. */
function workerFile(): string | null {
  const file = fileURLToPath(new URL('./score-worker.js', import.meta.url));
  return existsSync(file) ? file : null;
}

/**
 * Starts scoreSubjects in a worker thread, so the snapshot writer can write the paper rows (which
 * do not depend on the subject scores) on this thread meanwhile. The worker gets a copy of the
 * corpus columns and hands back flat rows; the result is that of scoreSubjects here. Run from
 * the sources (no compiled worker), it scores on this thread.
 */
export function scoreSubjectsAside(
  corpus: Corpus,
  impact: PaperImpact,
  params: ScoringParameters,
): ScoringAside {
  const file = workerFile();
  const { rows, hand: onRows, fail: failAll } = rowsHandover();
  if (!file) {
    const result = new Promise<ScoredSubjects>((resolve) =>
      resolve(scoreSubjects(corpus, impact, params, onRows)),
    );
    result.catch(failAll);
    return { rows, result, stop: () => {} };
  }
  // The columns move into shared memory, so the worker reads the same bytes instead of a copy of
  // them (about 100 MB at 1M works, at the build's peak).
  shareColumns(corpus, impact);
  const ranks: SharedRanks = {
    state: new Int32Array(new SharedArrayBuffer(4)),
    positions: new Int32Array(new SharedArrayBuffer(4 * corpus.n)),
  };
  const task: ScoringTask = {
    corpus,
    impact,
    params,
    ranks,
  };
  const worker = new Worker(file, { workerData: task });
  // The ranking positions here, while the worker starts (module load, the period sums of the
  // elements); it waits for them only at the elements' top papers.
  try {
    ranks.positions.set(globalRankPositions(corpus, impact));
    Atomics.store(ranks.state, 0, 1);
  } catch (e) {
    Atomics.store(ranks.state, 0, 2);
    throw e;
  } finally {
    Atomics.notify(ranks.state, 0);
  }
  // Settled once the worker has exited, not when its answer comes: what follows (the paper rows,
  // the references) counts on its memory being freed (releaseFreeMemory).
  const result = new Promise<ScoredSubjects>((resolve, reject) => {
    let scored: ScoredSubjects | undefined;
    worker.on('message', (reply: ScoringReply) => {
      if ('rows' in reply) onRows(reply.rows);
      else if (reply.ok) scored = reply.result;
      else reject(new Error(`scoring failed: ${reply.error}`));
    });
    worker.once('error', reject);
    worker.once('exit', (code) =>
      scored ? resolve(scored) : reject(new Error(`the scoring worker exited (code ${code})`)),
    );
  });
  // A build that fails before it awaits the scores must not leave an unhandled rejection.
  result.catch(failAll);
  return { rows, result, stop: () => void worker.terminate() };
}

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ELEMENTS } from '../elements/elements.js';
import { scoreCommunities } from '../scoring/communities.js';
import type { Corpus, Csr } from '../scoring/corpus.js';
import type { PaperImpact } from '../scoring/impact.js';
import type { ScoringParameters } from '../scoring/parameters.js';
import {
  buildContext,
  invert,
  type PeriodTotals,
  periodTotals,
  scoreEntities,
  type Window,
} from '../scoring/score-entities.js';
import { inSharedMemory } from '../util/shared-memory.js';
import {
  type CommunityRows,
  communityRows,
  type SubjectRows,
  SubjectRowsBuilder,
  transferablesOf,
} from './subject-rows.js';

/** What the snapshot needs from scoring, besides the per-paper impact and the communities, ready to write. */
export interface ScoredSubjects {
  subjects: SubjectRows;
  periods: PeriodTotals[];
  /** Each paper's position in the global ranking order (ranking rule of docs/metrics.md). */
  rankPosition: Int32Array;
  /** Each paper's recency weight at the cut-off (the RIS term), 0 without a date. */
  recencyNow: Float64Array;
  window: Window;
  /** Seconds the scoring took (on the worker thread, in a build), for the build's log. */
  seconds: number;
}

/** Scores every element, topic and keyword; returns their rows. */
export function scoreSubjects(
  corpus: Corpus,
  impact: PaperImpact,
  params: ScoringParameters,
): ScoredSubjects {
  const started = performance.now();
  const ctx = buildContext(corpus, impact, params);
  const rows = new SubjectRowsBuilder(corpus);
  // One type at a time: its scores are laid out as rows and dropped before the next is scored.
  const types = [
    { type: 'element', csr: corpus.elements, entities: ELEMENTS.length, res: ['yearly', 'monthly', 'daily'] },
    { type: 'topic', csr: corpus.topics, entities: corpus.topicIds.length, res: ['yearly', 'monthly'] },
    {
      type: 'keyword',
      csr: corpus.keywords,
      entities: corpus.keywordSlugs.length,
      res: ['yearly', 'monthly'],
    },
  ] as const;
  for (const { type, csr, entities, res } of types) {
    const keys = Array.from({ length: entities }, (_, i) => i);
    const inverted = invert(csr, corpus.n, entities); // one inversion for the scores and the postings
    rows.add(type, csr, entities, scoreEntities(ctx, type, csr, keys, res, inverted), inverted);
  }
  return {
    subjects: rows.finish(),
    periods: periodTotals(ctx),
    rankPosition: ctx.rankPosition,
    recencyNow: ctx.recencyNow,
    window: ctx.window,
    seconds: (performance.now() - started) / 1000,
  };
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
  return [
    ...transferablesOf(s.subjects),
    s.rankPosition.buffer as ArrayBuffer,
    s.recencyNow.buffer as ArrayBuffer,
  ];
}

/**
 * Puts in shared memory, in place and one column at a time (the peak is one column's copy), every
 * typed column of the corpus and the impact, and both halves of each CSR but the references,
 * which scoring does not read. The writer on this thread reads the same ones.
 */
export function shareColumns(corpus: Corpus, impact: PaperImpact): void {
  for (const owner of [corpus, impact] as unknown as Record<string, unknown>[]) {
    for (const [key, value] of Object.entries(owner)) {
      if (ArrayBuffer.isView(value)) owner[key] = inSharedMemory(value);
      else if (key !== 'refs' && isCsr(value))
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
}

export type ScoringReply = { ok: true; result: ScoredSubjects } | { ok: false; error: string };

/** Scoring running beside the caller: its result, and a way to stop it when the build fails. */
export interface ScoringAside {
  result: Promise<ScoredSubjects>;
  stop(): void;
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
  if (!file) {
    const result = new Promise<ScoredSubjects>((resolve) => resolve(scoreSubjects(corpus, impact, params)));
    result.catch(() => {});
    return { result, stop: () => {} };
  }
  // The columns move into shared memory, so the worker reads the same bytes instead of a copy of
  // them (about 100 MB at 1M works, at the build's peak). The references are the biggest column
  // and scoring does not read them: neither shared nor sent.
  shareColumns(corpus, impact);
  const task: ScoringTask = {
    corpus: { ...corpus, refs: { start: new Int32Array(0), values: new Int32Array(0) } },
    impact,
    params,
  };
  const worker = new Worker(file, { workerData: task });
  const result = new Promise<ScoredSubjects>((resolve, reject) => {
    worker.once('message', (reply: ScoringReply) => {
      if (reply.ok) resolve(reply.result);
      else reject(new Error(`scoring failed: ${reply.error}`));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the scoring worker exited (code ${code})`)));
  });
  // A build that fails before it awaits the scores must not leave an unhandled rejection.
  result.catch(() => {});
  return { result, stop: () => void worker.terminate() };
}

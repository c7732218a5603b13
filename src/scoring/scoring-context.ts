import type { Corpus } from './corpus.js';
import type { PaperImpact } from './impact.js';
import type { ScoringParameters } from './parameters.js';
import type { Resolution } from './resolutions.js';

/**
 * What the scoring of every entity type reads (built by score-entities.ts `buildContext`, summed
 * by entity-sums.ts): on its own, so the two modules import it and not each other.
 */

/** The scoring window: days after `startDay` up to the cut-off, and its papers. */
export interface Window {
  startDay: number; // exclusive
  endDay: number; // inclusive
  papers: number;
  highImpactPapers: number;
}

/** The shared facts every entity type is scored against, computed once per paper. */
export interface ScoringContext {
  corpus: Corpus;
  impact: PaperImpact;
  params: ScoringParameters;
  /** Each paper's place in the ranking order (read when first needed: see buildContext). */
  readonly rankPosition: Int32Array;
  /** The papers in the ranking order (the inverse of rankPosition), made when first read. */
  readonly rankOrder: Int32Array;
  window: Window;
  /** Corpus papers (and high-impact papers) per period, by resolution. */
  totals: Record<Resolution, Map<number, { papers: number; high: number }>>;
  /** Each paper's period key per resolution (NO_PERIOD when its date is too vague for it). */
  periodKey: Record<Resolution, Int32Array>;
  /** Each paper's recency weight at the end of its period (or the cut-off, if earlier). */
  periodRecency: Record<Resolution, Float64Array>;
  /** Each paper's recency weight at the cut-off; 0 when it has no date. */
  recencyNow: Float64Array;
  inWindow: Uint8Array;
}

/**
 * Every window, threshold and constant the metrics use, with its unit. The formulas in
 * formulas.ts take these as arguments so that tests can pin them on hand-computed examples.
 */
export interface ScoringParameters {
  /** RI and HRI window: trailing months up to the data's cut-off date. */
  currentWindowMonths: number;
  /** RIS recency decay: weight exp(-age_years / risDecayYears). */
  risDecayYears: number;
  /** A paper is high-impact when its impact_score (0-100 percentile) is at least this. */
  highImpactPercentile: number;
  /** Headline topics: the primary topic plus any topic with score >= this. */
  topicScoreThreshold: number;
  /** Headline keywords: keywords with score >= this. */
  keywordScoreThreshold: number;
  /** Citation curve: the age (years) by which a paper counts as fully cited. */
  citationHorizonYears: number;
  /** Citation curve per field needs at least this many cited papers, else the global curve is used. */
  minPapersPerCurve: number;
  /** Shrinkage strength toward the cohort mean for young papers (1 = projected = c + (1 - s) m). */
  projectionShrinkage: number;
  /** Rising: RI of the last risingRecentYears vs the risingBeforeYears before that. */
  risingRecentYears: number;
  risingBeforeYears: number;
  /** Rising when recent RI >= before RI x (1 + risingMargin). */
  risingMargin: number;
  /** ... and the recent window holds at least this many papers. */
  risingMinPapers: number;
  /** Papers ranked per entity (a hard cap the interface publishes: 100). */
  rankedPapersPerEntity: number;
  /** Elements a subject is routed to (the interface publishes the top 10). */
  routedElementsPerSubject: number;
  /** An element sub-community (element x topic) needs at least this many papers. */
  minSubCommunityPapers: number;
}

export const DEFAULT_PARAMETERS: ScoringParameters = {
  currentWindowMonths: 12,
  risDecayYears: 3,
  highImpactPercentile: 90,
  topicScoreThreshold: 0.9,
  keywordScoreThreshold: 0.5,
  citationHorizonYears: 8,
  minPapersPerCurve: 30,
  projectionShrinkage: 1,
  risingRecentYears: 2,
  risingBeforeYears: 3,
  risingMargin: 0.25,
  risingMinPapers: 10,
  rankedPapersPerEntity: 100,
  routedElementsPerSubject: 10,
  minSubCommunityPapers: 3,
};

export const DAYS_PER_YEAR = 365.25;

import { getOrCreate } from '../util/maps.js';
import { sharedArray } from '../util/shared-memory.js';
import { type Corpus, NO_DAY } from './corpus.js';
import {
  citationCurveFromTotals,
  defaultCitationCurve,
  expectedCitationShare,
  midRankPercentiles,
  projectedCitations,
} from './formulas.js';
import { DAYS_PER_YEAR, type ScoringParameters } from './parameters.js';

/** Per-paper citation facts: null where the paper's citations are unknown. */
export interface PaperImpact {
  /** 0-100 percentile of projected citations within field and year; NaN when citations are unknown. */
  impactScore: Float64Array;
  /** 0-100 percentile of raw citations within field and year; NaN when unknown. */
  citationPercentile: Float64Array;
  highImpact: Uint8Array;
  /** How each field's curve was obtained, for the snapshot's notes. */
  curves: Map<number, { source: 'field' | 'corpus' | 'default'; curve: number[] }>;
}

/** Citation curves per field, falling back to the whole corpus, then to a default shape. */
function estimateCurves(corpus: Corpus, params: ScoringParameters) {
  const { byField, all } = corpus.citationTotals;
  const corpusCurve = citationCurveFromTotals(all.byAge, all.citedPapers, params.minPapersPerCurve);
  const fallback = corpusCurve
    ? { source: 'corpus' as const, curve: corpusCurve }
    : { source: 'default' as const, curve: defaultCitationCurve(params.citationHorizonYears) };
  const curves = new Map<number, { source: 'field' | 'corpus' | 'default'; curve: number[] }>();
  for (const [field, totals] of byField) {
    const curve = citationCurveFromTotals(totals.byAge, totals.citedPapers, params.minPapersPerCurve);
    curves.set(field, curve ? { source: 'field', curve } : fallback);
  }
  return { curves, fallback };
}

/** impact_score, citation_percentile and the high-impact flag of every paper with known citations. */
export function computeImpact(corpus: Corpus, params: ScoringParameters): PaperImpact {
  const { curves, fallback } = estimateCurves(corpus, params);
  // In shared memory: the scoring worker reads them as they are (util/shared-memory.ts).
  const impactScore = sharedArray(Float64Array, corpus.n).fill(Number.NaN);
  const citationPercentile = sharedArray(Float64Array, corpus.n).fill(Number.NaN);
  const highImpact = sharedArray(Uint8Array, corpus.n);

  // Cohorts: field x publication year, papers with known citations and a known year only.
  const cohorts = new Map<number, number[]>();
  for (let p = 0; p < corpus.n; p++) {
    if (corpus.citations[p]! < 0 || corpus.year[p] === 0) continue;
    const key = (corpus.field[p]! + 1) * 10_000 + corpus.year[p]!;
    getOrCreate(cohorts, key, () => []).push(p);
  }
  for (const members of cohorts.values()) {
    const shares = members.map((p) => {
      const curve = (curves.get(corpus.field[p]!) ?? fallback).curve;
      const ageDay = corpus.ageDay[p]!;
      const age = ageDay === NO_DAY ? 0 : (corpus.cutoffDay - ageDay) / DAYS_PER_YEAR;
      return expectedCitationShare(curve, age);
    });
    const cites = members.map((p) => corpus.citations[p]!);
    const mean = cites.reduce((s, c, i) => s + c / shares[i]!, 0) / members.length;
    const projected = cites.map((c, i) =>
      projectedCitations(c, shares[i]!, mean, params.projectionShrinkage),
    );
    const impact = midRankPercentiles(projected);
    const raw = midRankPercentiles(cites);
    members.forEach((p, i) => {
      impactScore[p] = round(impact[i]!, 2);
      citationPercentile[p] = round(raw[i]!, 2);
      if (impact[i]! >= params.highImpactPercentile) highImpact[p] = 1;
    });
  }
  return { impactScore, citationPercentile, highImpact, curves };
}

export function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

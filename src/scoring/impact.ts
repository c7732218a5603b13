import { type Corpus, NO_DAY } from './corpus.js';
import {
  defaultCitationCurve,
  estimateCitationCurve,
  expectedCitationShare,
  midRankPercentiles,
  projectedCitations,
} from './formulas.js';
import { DAYS_PER_YEAR, type ScoringParameters } from './parameters.js';

/** Per-paper citation facts: null where the paper's citations are unknown. */
export interface PaperImpact {
  /** 0-100 percentile of projected citations within field and year. */
  impactScore: (number | null)[];
  /** 0-100 percentile of raw citations within field and year. */
  citationPercentile: (number | null)[];
  highImpact: Uint8Array;
  /** How each field's curve was obtained, for the snapshot's notes. */
  curves: Map<number, { source: 'field' | 'corpus' | 'default'; curve: number[] }>;
}

/** Citations by year after publication (index 0 = the publication year), up to the horizon. */
function countsByAge(json: string, year: number, horizon: number): number[] {
  const counts = new Array<number>(horizon + 1).fill(0);
  for (const [y, c] of JSON.parse(json) as [number, number][]) {
    const age = y - year;
    if (age >= 0 && age <= horizon) counts[age]! += c;
  }
  return counts;
}

/**
 * Citation curves per field from papers old enough to be fully cited and young enough for
 * counts_by_year to cover their whole life (OpenAlex gives roughly the last decade of counts).
 */
export function estimateCurves(corpus: Corpus, params: ScoringParameters) {
  const horizon = params.citationHorizonYears;
  const cutoffYear = new Date(corpus.cutoffDay * 86_400_000).getUTCFullYear();
  let coverageStart = Number.POSITIVE_INFINITY;
  for (let p = 0; p < corpus.n; p++) {
    const json = corpus.countsByYear[p];
    if (!json || json.length < 5) continue;
    for (const [y] of JSON.parse(json) as [number, number][]) if (y < coverageStart) coverageStart = y;
  }
  const byField = new Map<number, number[][]>();
  const all: number[][] = [];
  for (let p = 0; p < corpus.n; p++) {
    const json = corpus.countsByYear[p];
    const year = corpus.year[p]!;
    if (!json || year === 0 || year < coverageStart || year + horizon > cutoffYear) continue;
    const counts = countsByAge(json, year, horizon);
    all.push(counts);
    const f = corpus.field[p]!;
    let list = byField.get(f);
    if (!list) byField.set(f, (list = []));
    list.push(counts);
  }
  const corpusCurve = estimateCitationCurve(all, horizon, params.minPapersPerCurve);
  const fallback = corpusCurve
    ? { source: 'corpus' as const, curve: corpusCurve }
    : { source: 'default' as const, curve: defaultCitationCurve(horizon) };
  const curves = new Map<number, { source: 'field' | 'corpus' | 'default'; curve: number[] }>();
  for (const [field, list] of byField) {
    const curve = estimateCitationCurve(list, horizon, params.minPapersPerCurve);
    curves.set(field, curve ? { source: 'field', curve } : fallback);
  }
  return { curves, fallback };
}

/** impact_score, citation_percentile and the high-impact flag of every paper with known citations. */
export function computeImpact(corpus: Corpus, params: ScoringParameters): PaperImpact {
  const { curves, fallback } = estimateCurves(corpus, params);
  const impactScore: (number | null)[] = new Array(corpus.n).fill(null);
  const citationPercentile: (number | null)[] = new Array(corpus.n).fill(null);
  const highImpact = new Uint8Array(corpus.n);

  // Cohorts: field x publication year, papers with known citations and a known year only.
  const cohorts = new Map<number, number[]>();
  for (let p = 0; p < corpus.n; p++) {
    if (corpus.citations[p]! < 0 || corpus.year[p] === 0) continue;
    const key = (corpus.field[p]! + 1) * 10_000 + corpus.year[p]!;
    let list = cohorts.get(key);
    if (!list) cohorts.set(key, (list = []));
    list.push(p);
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
    const projected = cites.map((c, i) => projectedCitations(c, shares[i]!, mean, params.projectionShrinkage));
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

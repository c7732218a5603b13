/**
 * The metric formulas (docs/metrics.md), as small pure functions. Units are in the names:
 * ages in years, shares in 0-1, percentiles in 0-100, intensities per 10,000 corpus papers.
 */

/** w(p,s): a paper's fractional weight for one of its n headline subjects of the same type. */
export function fractionalWeight(subjectsOfSameType: number): number {
  return subjectsOfSameType > 0 ? 1 / subjectsOfSameType : 0;
}

/** RI (and HRI): 10,000 x (sum of fractional weights in the window) / (corpus papers in the window). */
export function researchIntensity(weightSum: number, corpusPapers: number): number {
  return corpusPapers > 0 ? (10_000 * weightSum) / corpusPapers : 0;
}

/** The recency weight of a paper of the given age: exp(-age / decay). Future dates count as age 0. */
export function recencyWeight(ageYears: number, decayYears: number): number {
  return Math.exp(-Math.max(0, ageYears) / decayYears);
}

/** RIS: 100 x ln(1 + raw) / ln(1 + max raw), 0-100 on a log scale against the most-researched subject. */
export function researchIntensityScore(raw: number, maxRaw: number): number {
  if (maxRaw <= 0 || raw <= 0) return 0;
  return (100 * Math.log1p(raw)) / Math.log1p(maxRaw);
}

/**
 * Mid-rank percentile of each value within its group, 0-100: 100 x (below + 0.5 x equal) / n.
 * Values are compared within the group only; null values get null and do not count in n. The
 * known values are sorted as a typed array (no comparator, no pair per value: a million values a
 * build at 1M works), and each one's count below and count equal found by binary search.
 */
export function midRankPercentiles(values: readonly (number | null)[]): (number | null)[] {
  const sorted = Float64Array.from(values.filter((v): v is number => v !== null)).sort();
  const n = sorted.length;
  // The first position whose value is not below v (`strict`), or not above it.
  const bound = (v: number, strict: boolean) => {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (strict ? sorted[mid]! < v : sorted[mid]! <= v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return values.map((v) => {
    if (v === null) return null;
    const below = bound(v, true);
    return (100 * (below + 0.5 * (bound(v, false) - below))) / n;
  });
}

/**
 * The expected share of its eventual citations (those by the horizon) that a paper has at the given
 * age, read off a cumulative curve indexed by whole years (curve[a] = share by the end of year a
 * after publication). Fractional ages interpolate linearly; ages past the curve count as 1.
 */
export function expectedCitationShare(curve: readonly number[], ageYears: number): number {
  if (curve.length === 0) return 1;
  const age = Math.max(0, ageYears);
  const lower = Math.floor(age);
  if (lower >= curve.length - 1) return curve[curve.length - 1]!;
  const frac = age - lower;
  return curve[lower]! + frac * (curve[lower + 1]! - curve[lower]!);
}

/**
 * A citation curve estimated from papers old enough to be fully cited, from their citations by
 * age summed over the papers (index a = citations in year a after publication) and the number of
 * those papers with any citation: the pooled cumulative share is the cumulative sum of the totals
 * over their sum by the horizon. Null when fewer than minPapers papers have any citation (the
 * caller falls back).
 */
export function citationCurveFromTotals(
  totalsByAge: readonly number[],
  citedPapers: number,
  minPapers: number,
): number[] | null {
  if (citedPapers < minPapers || citedPapers === 0) return null;
  let running = 0;
  const cumulative = totalsByAge.map((t) => (running += t));
  const full = cumulative[cumulative.length - 1]!;
  if (full <= 0) return null;
  // A floor keeps projections finite for papers in their first months.
  return cumulative.map((c) => Math.max(MIN_SHARE, c / full));
}

/** The smallest expected share a projection divides by. */
const MIN_SHARE = 0.05;

/** Used when the corpus has too few old cited papers to estimate a curve: 1 - exp(-(a + 0.5) / 3). */
export function defaultCitationCurve(horizonYears: number): number[] {
  const raw = Array.from({ length: horizonYears + 1 }, (_, a) => 1 - Math.exp(-(a + 0.5) / 3));
  const full = raw[horizonYears]!;
  return raw.map((v) => Math.max(MIN_SHARE, v / full));
}

/**
 * Projected citations of a paper with c observed citations and expected share s, shrunk toward
 * the cohort mean m (the mean of c / s over its field and year) with strength k:
 * (c + k(1 - s)m) / (s + k(1 - s)). An old paper (s = 1) keeps c; a new one (s -> 0) tends to m.
 */
export function projectedCitations(c: number, s: number, cohortMean: number, shrinkage: number): number {
  const share = Math.min(1, Math.max(MIN_SHARE, s));
  const prior = shrinkage * (1 - share);
  return (c + prior * cohortMean) / (share + prior);
}

/** Rising: recent RI beats the RI before by the margin, with enough recent papers to mean something. */
export function isRising(
  recentRi: number,
  beforeRi: number,
  recentPapers: number,
  margin: number,
  minPapers: number,
): boolean {
  if (recentPapers < minPapers) return false;
  return recentRi > 0 && recentRi >= beforeRi * (1 + margin);
}

/** The facts the paper ranking reads. */
export interface RankablePaper {
  impactScore: number | null;
  citations: number | null;
  /** The paper's place in DOI order, papers without a DOI after all others. */
  doiOrder: number;
  /** Publication day number, for ordering papers with unknown citations; null if unknown. */
  publicationDay: number | null;
  workId: number;
}

/**
 * The ranking order (rank 1 first). Papers with known citations always come before papers with
 * unknown citations, whatever their scores: an unknown is not a zero, and not a high score either.
 * Known: impact_score desc, citations desc, DOI asc. Unknown: newest first, then DOI asc.
 * Work id breaks any remaining tie so the order is total and reproducible.
 */
export function compareForRanking(a: RankablePaper, b: RankablePaper): number {
  const aKnown = a.citations !== null;
  const bKnown = b.citations !== null;
  if (aKnown !== bKnown) return aKnown ? -1 : 1;
  if (aKnown) {
    const byImpact = (b.impactScore ?? -1) - (a.impactScore ?? -1);
    if (byImpact !== 0) return byImpact;
    const byCitations = (b.citations ?? 0) - (a.citations ?? 0);
    if (byCitations !== 0) return byCitations;
  } else {
    const byDate =
      (b.publicationDay ?? Number.NEGATIVE_INFINITY) - (a.publicationDay ?? Number.NEGATIVE_INFINITY);
    if (byDate !== 0 && !Number.isNaN(byDate)) return byDate;
  }
  if (a.doiOrder !== b.doiOrder) return a.doiOrder - b.doiOrder;
  return a.workId - b.workId;
}

import { describe, expect, it } from 'vitest';
import {
  citationCurveFromTotals,
  compareForRanking,
  defaultCitationCurve,
  expectedCitationShare,
  fractionalWeight,
  isRising,
  midRankPercentiles,
  projectedCitations,
  recencyWeight,
  researchIntensity,
  researchIntensityScore,
} from '../../../src/scoring/formulas.js';

/**
 * citationCurveFromTotals from each paper's citations: each entry of yearlyCounts is one paper's
 * citations by year after publication (index 0 = its publication year) up to the horizon.
 * curve[a] = sum over papers of citations by age a / sum by the horizon.
 */
function estimateCitationCurve(
  yearlyCounts: readonly (readonly number[])[],
  horizonYears: number,
  minPapers: number,
): number[] | null {
  const totals = new Array<number>(horizonYears + 1).fill(0);
  let cited = 0;
  for (const counts of yearlyCounts) {
    let sum = 0;
    for (let a = 0; a <= horizonYears; a++) {
      totals[a]! += counts[a] ?? 0;
      sum += counts[a] ?? 0;
    }
    if (sum > 0) cited++;
  }
  return citationCurveFromTotals(totals, cited, minPapers);
}

describe('fractional weight w(p,s)', () => {
  it('splits a paper evenly over its headline subjects of one type', () => {
    expect(fractionalWeight(1)).toBe(1);
    expect(fractionalWeight(4)).toBe(0.25);
    expect(fractionalWeight(0)).toBe(0);
  });
});

describe('RI', () => {
  it('is fractional papers per 10,000 corpus papers', () => {
    // 2.5 fractional papers among 1,000 corpus papers in the window -> 25 per 10,000.
    expect(researchIntensity(2.5, 1000)).toBe(25);
    expect(researchIntensity(3, 0)).toBe(0);
  });
});

describe('recency weight and RIS', () => {
  it('decays as exp(-age/3)', () => {
    expect(recencyWeight(0, 3)).toBe(1);
    expect(recencyWeight(3, 3)).toBeCloseTo(0.367879, 6);
    expect(recencyWeight(-1, 3)).toBe(1); // future-dated papers count as new
  });
  it('is 100 ln(1 + raw) / ln(1 + max raw)', () => {
    // raw 3, max 15: 100 * ln 4 / ln 16 = 50 exactly.
    expect(researchIntensityScore(3, 15)).toBeCloseTo(50, 10);
    expect(researchIntensityScore(15, 15)).toBe(100);
    expect(researchIntensityScore(0, 15)).toBe(0);
    expect(researchIntensityScore(1, 0)).toBe(0);
  });
});

describe('mid-rank percentiles', () => {
  it('counts ties as half', () => {
    // values 1, 2, 2, 5: below/equal -> 1: 0+0.5 -> 12.5; 2: 1+1 -> 50; 5: 3+0.5 -> 87.5
    expect(midRankPercentiles([2, 1, 5, 2])).toEqual([50, 12.5, 87.5, 50]);
  });
  it('gives null to unknown values and leaves them out of n', () => {
    expect(midRankPercentiles([null, 10, 20])).toEqual([null, 25, 75]);
  });
  it('gives each value 100 x (count below + half the count equal) / n, on random cohorts with ties', () => {
    let seed = 7;
    const rnd = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    for (let round = 0; round < 200; round++) {
      const n = 1 + Math.floor(rnd() * 60);
      const values = Array.from({ length: n }, () =>
        rnd() < 0.5 ? Math.floor(rnd() * 6) : rnd() < 0.1 ? -0 : rnd() * 1000,
      );
      const want = values.map(
        (v) => (100 * (values.filter((x) => x < v).length + 0.5 * values.filter((x) => x === v).length)) / n,
      );
      expect(midRankPercentiles(values)).toEqual(want);
      // With unknown values among them, the same for the known ones.
      const mixed = [...values, null];
      expect(midRankPercentiles(mixed)).toEqual([...want, null]);
    }
  });
});

describe('citation curves', () => {
  it('is the pooled cumulative share of citations by age', () => {
    // Two papers, horizon 2: [1,1,2] and [0,2,2]. Cumulative sums: age0 1+0, age1 2+2, age2 4+4.
    const curve = estimateCitationCurve(
      [
        [1, 1, 2],
        [0, 2, 2],
      ],
      2,
      1,
    );
    expect(curve).toEqual([0.125, 0.5, 1]);
  });
  it('needs enough cited papers, else null (the caller falls back)', () => {
    expect(estimateCitationCurve([[0, 0, 0]], 2, 1)).toBeNull();
    expect(estimateCitationCurve([[1, 1, 1]], 2, 2)).toBeNull();
  });
  it('floors the share so young papers do not divide by zero', () => {
    expect(estimateCitationCurve([[0, 0, 10]], 2, 1)).toEqual([0.05, 0.05, 1]);
  });
  it('interpolates between whole years and saturates past the horizon', () => {
    const curve = [0.2, 0.6, 1];
    expect(expectedCitationShare(curve, 0.5)).toBeCloseTo(0.4, 10);
    expect(expectedCitationShare(curve, 1.25)).toBeCloseTo(0.7, 10);
    expect(expectedCitationShare(curve, 7)).toBe(1);
  });
  it('has a default curve that ends at 1 and rises', () => {
    const c = defaultCitationCurve(4);
    expect(c[4]).toBe(1);
    for (let i = 1; i < c.length; i++) expect(c[i]!).toBeGreaterThan(c[i - 1]!);
    // a=0: (1 - e^(-1/6)) / (1 - e^(-1.5)) = 0.15352 / 0.77687
    expect(c[0]).toBeCloseTo(0.19762, 4);
  });
});

describe('projected citations', () => {
  it('keeps an old paper at its count', () => {
    expect(projectedCitations(12, 1, 40, 1)).toBe(12);
  });
  it('moves a young paper toward its cohort mean', () => {
    // c=2, s=0.25, m=20, k=1: (2 + 0.75*20) / (0.25 + 0.75) = 17
    expect(projectedCitations(2, 0.25, 20, 1)).toBeCloseTo(17, 10);
    // without shrinkage: plain c / s = 8
    expect(projectedCitations(2, 0.25, 20, 0)).toBeCloseTo(8, 10);
  });
});

describe('rising', () => {
  it('needs the margin and enough papers', () => {
    expect(isRising(12.5, 10, 10, 0.25, 10)).toBe(true);
    expect(isRising(12.4, 10, 10, 0.25, 10)).toBe(false);
    expect(isRising(50, 10, 9, 0.25, 10)).toBe(false);
    expect(isRising(1, 0, 20, 0.25, 10)).toBe(true);
    expect(isRising(0, 0, 20, 0.25, 10)).toBe(false);
  });
});

describe('ranking order', () => {
  // DOIs by their place in DOI order; a paper without a DOI sorts after every DOI.
  const DOIS = ['10.1/a', '10.1/b', '10.1/c', '10.1/x', '10.1/y', '10.1/z'];
  const day = (iso: string) => Date.parse(iso) / 86_400_000;
  const paper = (p: {
    workId: number;
    impactScore?: number;
    citations?: number | null;
    doi?: string | null;
    date?: string;
  }) => ({
    impactScore: p.impactScore ?? null,
    citations: p.citations ?? null,
    doiOrder: p.doi ? DOIS.indexOf(p.doi) : DOIS.length,
    publicationDay: p.date ? day(p.date) : null,
    workId: p.workId,
  });
  const order = (list: ReturnType<typeof paper>[]) => [...list].sort(compareForRanking).map((p) => p.workId);

  it('orders by impact_score, then citations, then DOI', () => {
    expect(
      order([
        paper({ workId: 1, impactScore: 50, citations: 3, doi: '10.1/b' }),
        paper({ workId: 2, impactScore: 90, citations: 1, doi: '10.1/z' }),
        paper({ workId: 3, impactScore: 50, citations: 7, doi: '10.1/c' }),
        paper({ workId: 4, impactScore: 50, citations: 3, doi: '10.1/a' }),
      ]),
    ).toEqual([2, 3, 4, 1]);
  });
  it('never puts a paper with unknown citations above one with known citations', () => {
    expect(
      order([
        paper({ workId: 1, citations: null, date: '2026-01-01' }),
        paper({ workId: 2, impactScore: 0.5, citations: 0, date: '1990-01-01' }),
        paper({ workId: 3, citations: null, date: '2025-01-01' }),
      ]),
    ).toEqual([2, 1, 3]);
  });
  it('orders unknown-citation papers newest first, then by DOI (nulls last), then work id', () => {
    expect(
      order([
        paper({ workId: 5, date: '2024-05-01', doi: null }),
        paper({ workId: 4, date: '2024-05-01', doi: '10.1/x' }),
        paper({ workId: 3, date: '2024-06-01', doi: '10.1/y' }),
        paper({ workId: 2, date: '2024-05-01', doi: null }),
      ]),
    ).toEqual([3, 4, 2, 5]);
  });
});

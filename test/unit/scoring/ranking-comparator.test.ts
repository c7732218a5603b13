import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Corpus } from '../../../src/scoring/corpus.js';
import { NO_DAY } from '../../../src/scoring/corpus.js';
import { compareForRanking } from '../../../src/scoring/formulas.js';
import type { PaperImpact } from '../../../src/scoring/impact.js';
import { globalRankPositions, paperComparator } from '../../../src/scoring/score-entities.js';

const paperArb = fc.record({
  citations: fc.option(fc.integer({ min: 0, max: 5 }), { nil: null }),
  impact: fc.option(fc.constantFrom(10, 50, 50, 90), { nil: null }),
  day: fc.option(fc.integer({ min: 19_000, max: 19_003 }), { nil: null }),
  doiOrder: fc.integer({ min: 0, max: 3 }),
});

describe('the fast paper comparator', () => {
  it('orders exactly as the ranking rule', () => {
    fc.assert(
      fc.property(fc.array(paperArb, { minLength: 2, maxLength: 30 }), (papers) => {
        const n = papers.length;
        const corpus = {
          citations: Int32Array.from(papers, (p) => p.citations ?? -1),
          doiRank: Int32Array.from(papers, (p) => p.doiOrder),
          day: Int32Array.from(papers, (p) => p.day ?? NO_DAY),
          workId: Float64Array.from(papers, (_, i) => 1000 + i),
        } as unknown as Corpus;
        // Papers with unknown citations have no impact score.
        const impact = {
          impactScore: Float64Array.from(papers, (p) =>
            p.citations === null || p.impact === null ? Number.NaN : p.impact,
          ),
        } as unknown as PaperImpact;
        const rule = (i: number, j: number) =>
          compareForRanking(
            {
              impactScore: Number.isNaN(impact.impactScore[i]!) ? null : impact.impactScore[i]!,
              citations: papers[i]!.citations,
              doiOrder: papers[i]!.doiOrder,
              publicationDay: papers[i]!.day,
              workId: 1000 + i,
            },
            {
              impactScore: Number.isNaN(impact.impactScore[j]!) ? null : impact.impactScore[j]!,
              citations: papers[j]!.citations,
              doiOrder: papers[j]!.doiOrder,
              publicationDay: papers[j]!.day,
              workId: 1000 + j,
            },
          );
        const ids = Array.from({ length: n }, (_, i) => i);
        expect([...ids].sort(paperComparator(corpus, impact))).toEqual([...ids].sort(rule));
      }),
      { numRuns: 300 },
    );
  });
});

describe('globalRankPositions', () => {
  const corpusArb = fc.array(
    fc.record({
      citations: fc.option(fc.integer({ min: 0, max: 4 }), { nil: null }),
      impact: fc.option(fc.constantFrom(0, 12.5, 50, 50, 99.99), { nil: null }),
      day: fc.option(fc.integer({ min: 19_000, max: 19_003 }), { nil: null }),
      // Many papers share a DOI rank (no DOI, or the same DOI twice), and some a work id.
      doiRank: fc.integer({ min: 1, max: 4 }),
      workId: fc.integer({ min: 1, max: 40 }),
    }),
    { minLength: 1, maxLength: 60 },
  );

  it('gives each paper its place in the comparator order, by packed keys or by the comparator', () => {
    fc.assert(
      fc.property(corpusArb, fc.boolean(), (papers, packed) => {
        const n = papers.length;
        const corpus = {
          n,
          citations: Int32Array.from(papers, (p) => p.citations ?? -1),
          doiRank: Int32Array.from(papers, (p) => p.doiRank),
          day: Int32Array.from(papers, (p) => p.day ?? NO_DAY),
          workId: Float64Array.from(papers, (p) => p.workId),
        } as unknown as Corpus;
        const impact = {
          impactScore: Float64Array.from(papers, (p) => (p.impact === null ? Number.NaN : p.impact)),
        } as unknown as PaperImpact;
        const order = Array.from({ length: n }, (_, i) => i).sort(paperComparator(corpus, impact));
        const expected = new Int32Array(n);
        order.forEach((p, i) => {
          expected[p] = i;
        });
        // maxKey 1: every corpus too wide for packed keys, so the comparator's own sort.
        expect(globalRankPositions(corpus, impact, packed ? 2 ** 53 : 1)).toEqual(expected);
      }),
      { numRuns: 400 },
    );
  });
});

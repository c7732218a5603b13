import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { topPapers } from '../../../src/scoring/score-entities.js';
import { csrOf } from '../../helpers/corpora.js';

/**
 * Every entity's top papers from one pass in the ranking order are, for each entity, its own
 * papers sorted by ranking position and cut at the limit (a paper listing the entity twice
 * counts twice, as in the entity's list of papers).
 */
describe('topPapers', () => {
  it("is each entity's papers by ranking position, cut at the limit", () => {
    const corpusArb = fc
      .record({ n: fc.integer({ min: 1, max: 60 }), entities: fc.integer({ min: 1, max: 6 }) })
      .chain(({ n, entities }) =>
        fc.record({
          entities: fc.constant(entities),
          lists: fc.array(fc.array(fc.integer({ min: 0, max: entities - 1 }), { maxLength: 4 }), {
            minLength: n,
            maxLength: n,
          }),
          order: fc.shuffledSubarray(
            Array.from({ length: n }, (_, i) => i),
            { minLength: n, maxLength: n },
          ),
          limit: fc.integer({ min: 1, max: 8 }),
        }),
      );
    fc.assert(
      fc.property(corpusArb, ({ entities, lists, order, limit }) => {
        const csr = csrOf(lists);
        const rankOrder = Int32Array.from(order);
        const position = new Int32Array(order.length);
        order.forEach((p, r) => {
          position[p] = r;
        });
        const { papers, count } = topPapers(csr, entities, rankOrder, limit);
        for (let e = 0; e < entities; e++) {
          const own = lists.flatMap((l, p) => l.filter((x) => x === e).map(() => p));
          const expected = own.sort((a, b) => position[a]! - position[b]!).slice(0, limit);
          expect([...papers.subarray(e * limit, e * limit + count[e]!)]).toEqual(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the best first and stops at the limit (a pinned example)', () => {
    // Papers 0..4 ranked 3, 0, 4, 1, 2; entity 0 is on papers 0, 1, 3, 4; entity 1 on 2 and 4.
    const csr = csrOf([[0], [0], [1], [0], [0, 1]]);
    const { papers, count } = topPapers(csr, 2, Int32Array.from([3, 0, 4, 1, 2]), 3);
    expect([...count]).toEqual([3, 2]);
    expect([...papers.subarray(0, 3)]).toEqual([3, 0, 4]);
    expect([...papers.subarray(3, 5)]).toEqual([4, 2]);
  });
});

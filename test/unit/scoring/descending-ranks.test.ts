import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { descendingRanks } from '../../../src/scoring/score-entities.js';

/** The rule: each value's place among the distinct values, largest first. */
function rule(values: number[]) {
  const distinct = [...new Set(values)].sort((a, b) => b - a);
  return { count: distinct.length, rank: Int32Array.from(values, (v) => distinct.indexOf(v)) };
}

describe('descendingRanks', () => {
  it('ranks distinct values, largest first', () => {
    expect(descendingRanks(Float64Array.of(3, 1, 3, 2))).toEqual({
      count: 3,
      rank: Int32Array.of(0, 2, 0, 1),
    });
    expect(descendingRanks(Float64Array.of(12.5, -1, 99.99, 12.5), 100)).toEqual({
      count: 3,
      rank: Int32Array.of(1, 2, 0, 1),
    });
  });

  it('gives the rule by table (whole numbers of 1/scale, a narrow range) or by sort', () => {
    const hundredths = fc.integer({ min: -100, max: 10_000 }).map((k) => Math.round(k) / 100);
    const wide = fc.constantFrom(-2_147_483_648, 0, 1, 2_000_000_000); // a range the table refuses
    const anyDouble = fc.double({ min: -1e6, max: 1e6, noNaN: true });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.tuple(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 40 }), fc.constant(1)),
          fc.tuple(fc.array(hundredths, { maxLength: 40 }), fc.constant(100)),
          fc.tuple(fc.array(fc.oneof(hundredths, anyDouble), { maxLength: 40 }), fc.constant(100)),
          fc.tuple(fc.array(wide, { maxLength: 40 }), fc.constant(1)),
        ),
        ([values, scale]) => {
          expect(descendingRanks(Float64Array.from(values), scale)).toEqual(rule(values));
        },
      ),
      { numRuns: 400 },
    );
  });
});

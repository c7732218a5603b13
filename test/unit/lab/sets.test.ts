import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  countBy,
  difference,
  evenSample,
  filterRange,
  intersect,
  intersectAll,
  lowestK,
  unionAll,
} from '../../../src/lab/sets.js';

const list = (...xs: number[]) => Int32Array.from(xs);
const arr = (a: Int32Array) => [...a];

describe('posting-list algebra: pinned examples', () => {
  it('intersects, unions and subtracts ascending lists', () => {
    expect(arr(intersect(list(1, 3, 5, 7, 9), list(3, 4, 9, 10)))).toEqual([3, 9]);
    expect(arr(intersectAll([list(1, 2, 3, 4), list(2, 4, 6), list(2, 4)]))).toEqual([2, 4]);
    expect(arr(intersectAll([]))).toEqual([]);
    expect(arr(unionAll([list(1, 5), list(2, 5, 8), list()]))).toEqual([1, 2, 5, 8]);
    expect(arr(difference(list(1, 2, 3, 4, 5), list(2, 4, 6)))).toEqual([1, 3, 5]);
  });

  it('filters by a column range (inclusive, open ends)', () => {
    const year = [0, 2019, 2020, 2021, 2022];
    expect(arr(filterRange(list(0, 1, 2, 3, 4), year, 2020, 2021))).toEqual([2, 3]);
    expect(arr(filterRange(list(0, 1, 2, 3, 4), year, 2021, null))).toEqual([3, 4]);
    expect(arr(filterRange(list(0, 1, 2, 3, 4), year, null, 2019))).toEqual([0, 1]);
  });

  it('samples evenly and deterministically, and keeps short lists whole', () => {
    expect(arr(evenSample(list(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), 5))).toEqual([0, 2, 4, 6, 8]);
    expect(arr(evenSample(list(4, 5), 5))).toEqual([4, 5]);
  });

  it('picks the k lowest keys, lowest first', () => {
    const key = [50, 10, 40, 20, 30];
    expect(lowestK(list(0, 1, 2, 3, 4), key, 3)).toEqual([1, 3, 4]);
    expect(lowestK(list(0, 2), key, 5)).toEqual([2, 0]);
    expect(lowestK(list(0, 1), key, 0)).toEqual([]);
  });

  it('counts by a column', () => {
    expect([...countBy(list(0, 1, 2, 3), [7, 8, 7, 7])]).toEqual([
      [7, 3],
      [8, 1],
    ]);
  });
});

const sortedSet = fc
  .uniqueArray(fc.integer({ min: 0, max: 300 }), { maxLength: 80 })
  .map((xs) => Int32Array.from(xs.sort((a, b) => a - b)));

describe('posting-list algebra: properties against plain sets', () => {
  it('AND, OR, NOT agree with Set operations and stay ascending', () => {
    fc.assert(
      fc.property(fc.array(sortedSet, { minLength: 1, maxLength: 4 }), sortedSet, (lists, other) => {
        const sets = lists.map((l) => new Set(l));
        const and = [...sets[0]!].filter((x) => sets.every((s) => s.has(x)));
        const or = [...new Set(lists.flatMap((l) => [...l]))].sort((a, b) => a - b);
        expect(arr(intersectAll(lists))).toEqual(and);
        expect(arr(unionAll(lists))).toEqual(or);
        const not = [...lists[0]!].filter((x) => !new Set(other).has(x));
        expect(arr(difference(lists[0]!, other))).toEqual(not);
      }),
      { numRuns: 300 },
    );
  });

  it('agree with Set operations between a sparse and a dense list, and across many lists', () => {
    // Long gallops (a few values against thousands) and short ones (lists alike), and a union of
    // up to 40 lists merged in rounds (an odd one left over in some).
    const dense = fc
      .uniqueArray(fc.integer({ min: 0, max: 20_000 }), { minLength: 500, maxLength: 5000 })
      .map((xs) => Int32Array.from(xs.sort((a, b) => a - b)));
    fc.assert(
      fc.property(dense, sortedSet, fc.array(sortedSet, { maxLength: 40 }), (big, small, many) => {
        const bigSet = new Set(big);
        expect(arr(intersect(small, big))).toEqual([...small].filter((x) => bigSet.has(x)));
        expect(arr(intersect(big, big))).toEqual(arr(big));
        expect(arr(difference(small, big))).toEqual([...small].filter((x) => !bigSet.has(x)));
        const smallSet = new Set(small);
        expect(arr(difference(big, small))).toEqual([...big].filter((x) => !smallSet.has(x)));
        const or = [...new Set([...many, big].flatMap((l) => [...l]))].sort((a, b) => a - b);
        expect(arr(unionAll([...many, big]))).toEqual(or);
      }),
      { numRuns: 200 },
    );
  });

  it('lowestK equals sorting by key and taking k', () => {
    fc.assert(
      fc.property(sortedSet, fc.integer({ min: 0, max: 120 }), (l, k) => {
        const key = Array.from({ length: 301 }, (_, i) => (i * 7919) % 301); // a permutation
        const expected = [...l].sort((a, b) => key[a]! - key[b]!).slice(0, k);
        expect(lowestK(l, key, k)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

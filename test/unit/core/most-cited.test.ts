import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mostCited } from '../../../src/core/most-cited.js';

/** The plain count: a map per reference, every cited paper sorted. */
function naive(lists: (Int32Array | null)[], start: number, end: number) {
  const cited = new Map<number, number>();
  for (const list of lists) for (const o of list ?? []) cited.set(o, (cited.get(o) ?? 0) + 1);
  const ordered = [...cited].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return { page: ordered.slice(start, end), distinct: ordered.length };
}

/** References as the snapshot's column hands them out: views into one larger array. */
const refs = (ordinals: number[], offset = 0) => {
  const all = new Int32Array(offset + ordinals.length + 2).fill(-7);
  all.set(ordinals, offset);
  return all.subarray(offset, offset + ordinals.length);
};

describe('mostCited', () => {
  it('ranks by times cited, ties by the lower ordinal, and counts the distinct papers', () => {
    const r = mostCited([refs([5, 3, 9]), null, refs([9, 3]), refs([3, 7])], 0, 3);
    expect(r).toEqual({
      page: [
        [3, 3],
        [9, 2],
        [5, 1],
      ],
      distinct: 4,
    });
    expect(mostCited([refs([5, 3, 9]), refs([9, 3]), refs([3, 7])], 2, 10).page).toEqual([
      [5, 1],
      [7, 1],
    ]);
    expect(mostCited([], 0, 10)).toEqual({ page: [], distinct: 0 });
  });

  it('reads only the view of each list, not the array around it', () => {
    expect(mostCited([refs([4, 4, 2], 1), refs([2], 2)], 0, 5)).toEqual({
      page: [
        [2, 2],
        [4, 2],
      ],
      distinct: 2,
    });
  });

  it('gives the same page as counting every reference in a map', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.option(fc.tuple(fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 40 }), fc.nat(3))),
        ),
        fc.nat(20),
        fc.nat(30),
        (specs, start, size) => {
          const lists = specs.map((s) => (s ? refs(...s) : null));
          expect(mostCited(lists, start, start + size)).toEqual(naive(lists, start, start + size));
        },
      ),
    );
  });
});

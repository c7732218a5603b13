import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mostCited } from '../../src/core/most-cited.js';

/** The plain count: a map per reference, every cited paper sorted. */
function naive(blobs: (Buffer | null)[], start: number, end: number) {
  const cited = new Map<number, number>();
  for (const blob of blobs) {
    if (!blob) continue;
    for (let i = 0; i + 4 <= blob.length; i += 4)
      cited.set(blob.readInt32LE(i), (cited.get(blob.readInt32LE(i)) ?? 0) + 1);
  }
  const ordered = [...cited].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return { page: ordered.slice(start, end), distinct: ordered.length };
}

const blob = (ordinals: number[], offset = 0, tail = 0) => {
  const b = Buffer.alloc(offset + ordinals.length * 4 + tail);
  for (const [i, o] of ordinals.entries()) b.writeInt32LE(o, offset + i * 4);
  return b.subarray(offset);
};

describe('mostCited', () => {
  it('ranks by times cited, ties by the lower ordinal, and counts the distinct papers', () => {
    const r = mostCited([blob([5, 3, 9]), null, blob([9, 3]), blob([3, 7])], 0, 3);
    expect(r).toEqual({
      page: [
        [3, 3],
        [9, 2],
        [5, 1],
      ],
      distinct: 4,
    });
    expect(mostCited([blob([5, 3, 9]), blob([9, 3]), blob([3, 7])], 2, 10).page).toEqual([
      [5, 1],
      [7, 1],
    ]);
    expect(mostCited([], 0, 10)).toEqual({ page: [], distinct: 0 });
  });

  it('reads unaligned blobs and ignores a trailing partial ordinal', () => {
    expect(mostCited([blob([4, 4, 2], 1, 3), blob([2], 2)], 0, 5)).toEqual({
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
          fc.option(
            fc.tuple(fc.array(fc.integer({ min: 0, max: 60 }), { maxLength: 40 }), fc.nat(3), fc.nat(3)),
          ),
        ),
        fc.nat(20),
        fc.nat(30),
        (specs, start, size) => {
          const blobs = specs.map((s) => (s ? blob(...s) : null));
          expect(mostCited(blobs, start, start + size)).toEqual(naive(blobs, start, start + size));
        },
      ),
    );
  });
});

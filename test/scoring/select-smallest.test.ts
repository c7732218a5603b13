import { describe, expect, it } from 'vitest';
import { selectSmallest } from '../../src/scoring/score-entities.js';

/** A deterministic shuffle source (no Math.random in tests). */
function lcg(seed: number) {
  let s = seed;
  return () => {
    s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0;
    return s / 2 ** 32;
  };
}

describe('selectSmallest', () => {
  it('puts the k smallest of distinct keys first, for shuffled, sorted and reversed input', () => {
    const next = lcg(7);
    for (const m of [1, 2, 3, 10, 101, 1000, 4099]) {
      const sorted = Float64Array.from({ length: m }, (_, i) => i * 3 + 0.5);
      const shuffled = sorted.slice();
      for (let i = m - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
      }
      for (const input of [shuffled, sorted.slice(), sorted.slice().reverse()]) {
        for (const k of [1, Math.min(m, 5), Math.ceil(m / 2), m]) {
          const a = input.slice();
          selectSmallest(a, k);
          expect(Array.from(a.subarray(0, k)).sort((x, y) => x - y)).toEqual(
            Array.from(sorted.subarray(0, k)),
          );
          expect(Array.from(a).sort((x, y) => x - y)).toEqual(Array.from(sorted));
        }
      }
    }
  });
});

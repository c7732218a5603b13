import { describe, expect, it } from 'vitest';
import { idIndex } from '../../../src/scoring/corpus.js';

describe('idIndex', () => {
  it('finds every id where a Map would, and -1 for ids not held', () => {
    // Ids like OpenAlex's (up to ~10^10, past 2^32) and some sharing their low 32 bits.
    const ids = new Float64Array(5000);
    for (let i = 0; i < ids.length; i++) ids[i] = i % 3 === 0 ? 2 ** 32 * (i % 7) + i : 1_000_003 * i + 4e9;
    const index = idIndex(ids);
    const map = new Map<number, number>();
    for (let i = 0; i < ids.length; i++) map.set(ids[i]!, i);
    for (const [id, i] of map) expect(index(id)).toBe(i);
    for (const absent of [0.5, -1, 7, 2 ** 40, 9_999_999_999])
      expect(index(absent)).toBe(map.get(absent) ?? -1);
  });

  it('keeps the last position of a repeated id, as Map.set does', () => {
    const index = idIndex(Float64Array.from([5, 9, 5, 2 ** 33 + 5]));
    expect([index(5), index(9), index(2 ** 33 + 5), index(2 ** 32 + 5)]).toEqual([2, 1, 3, -1]);
  });

  it('answers -1 on an empty list', () => {
    expect(idIndex(new Float64Array(0))(1)).toBe(-1);
  });
});

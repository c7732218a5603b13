import { describe, expect, it } from 'vitest';
import { bm25Idf, bm25TermScore } from '../../../src/snapshot/bm25.js';

describe('bm25 as FTS5 computes it', () => {
  it('idf: ln((N - n + 0.5) / (n + 0.5)), and 1e-6 for a term in half the rows or more', () => {
    expect(bm25Idf(Math.log, 100, 10)).toBe(Math.log(90.5 / 10.5));
    expect(bm25Idf(Math.log, 100, 10)).toBeCloseTo(2.15397, 5);
    expect(bm25Idf(Math.log, 100, 50)).toBe(1e-6);
    expect(bm25Idf(Math.log, 100, 80)).toBe(1e-6);
  });

  it("a term's part: idf when held once in a row of average length, less than twice that held twice in a longer one", () => {
    expect(bm25TermScore(2, 1, 10, 10)).toBe(2);
    // k = 1 - 0.75 + 0.75 * 20 / 10 = 1.75: 2 * 2 * 2.2 / (2 + 1.2 * 1.75)
    expect(bm25TermScore(2, 2, 20, 10)).toBeCloseTo(8.8 / 4.1, 12);
  });
});

import { describe, expect, it } from 'vitest';
import { doiOrder } from '../../../src/scoring/doi-order.js';

describe('doiOrder', () => {
  it('orders papers by DOI rank, papers of one rank by ordinal', () => {
    // Ranks as the load gives them: dense from 1, papers without a DOI sharing the last (3).
    expect([...doiOrder({ n: 5, doiRank: Int32Array.from([2, 1, 3, 1, 3]) })]).toEqual([1, 3, 0, 2, 4]);
    expect([...doiOrder({ n: 0, doiRank: new Int32Array(0) })]).toEqual([]);
  });
});

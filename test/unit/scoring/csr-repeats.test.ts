import { describe, expect, it } from 'vitest';
import { withoutRepeats } from '../../../src/scoring/corpus.js';

describe('a CSR without repeated values (a keyword a work lists twice counts once)', () => {
  it('drops each paper’s repeats in place and keeps papers apart, empty ones too', () => {
    // Paper 0: 5 5 7; paper 1: none; paper 2: 7 7 (the same value as paper 0's last); paper 3: 1 2 3.
    const start = Int32Array.from([0, 3, 3, 5, 8]);
    const values = Int32Array.from([5, 5, 7, 7, 7, 1, 2, 3]);
    const csr = withoutRepeats(4, start, values);
    expect([...csr.start]).toEqual([0, 2, 2, 3, 6]);
    expect([...csr.values]).toEqual([5, 7, 7, 1, 2, 3]);
  });

  it('leaves a CSR without repeats as it is', () => {
    const csr = withoutRepeats(2, Int32Array.from([0, 2, 3]), Int32Array.from([1, 2, 1]));
    expect([...csr.start]).toEqual([0, 2, 3]);
    expect([...csr.values]).toEqual([1, 2, 1]);
  });
});

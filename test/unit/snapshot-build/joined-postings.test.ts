import { describe, expect, it } from 'vitest';
import { joined } from '../../../src/snapshot-build/subject-rows.js';

describe('postings handed over without a copy', () => {
  it('joins consecutive views of one buffer into one view of it (no copy)', () => {
    const inversion = Int32Array.of(9, 1, 4, 7, 2, 3, 8);
    const parts = [inversion.subarray(1, 3), inversion.subarray(3, 3), inversion.subarray(3, 6)];
    const out = joined(parts);
    expect(Array.from(out ?? [])).toEqual([1, 4, 7, 2, 3]);
    expect(out?.buffer).toBe(inversion.buffer);
    expect(out?.byteOffset).toBe(4);
  });

  it('gives null for parts out of order, with a gap, or of two buffers, and for none', () => {
    const a = Int32Array.of(1, 2, 3, 4);
    expect(joined([a.subarray(2, 4), a.subarray(0, 2)])).toBeNull();
    expect(joined([a.subarray(0, 1), a.subarray(2, 4)])).toBeNull();
    expect(joined([a.subarray(0, 2), Int32Array.of(3, 4)])).toBeNull();
    expect(joined([])).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { oneLine } from '../../../src/cli/failure-line.js';

describe('the one line of a failure that is not a bug', () => {
  it('names BUILD_MEMORY_MB when DuckDB runs out of its share', () => {
    const e = new Error(
      'Out of Memory Error: failed to pin block of size 256.0 KiB (572.0 MiB/572.2 MiB used)\n\nPossible solutions:\n* Reducing the number of threads',
    );
    expect(oneLine(e, { BUILD_MEMORY_MB: '1500' })).toBe(
      "Out of Memory Error: failed to pin block of size 256.0 KiB (572.0 MiB/572.2 MiB used) (DuckDB's share of the batch jobs' memory budget, BUILD_MEMORY_MB=1500, is too small for this corpus: raise BUILD_MEMORY_MB; docs/operations.md)",
    );
    expect(oneLine(e, {})).toContain('BUILD_MEMORY_MB=2500');
  });

  it('keeps a disk error to its line, and gives a bug no line (its stack is printed)', () => {
    expect(oneLine(Object.assign(new Error('write failed'), { code: 'ENOSPC' }))).toBe(
      'write failed (ENOSPC)',
    );
    expect(oneLine(new Error('database or disk is full\nmore'))).toBe('database or disk is full');
    expect(oneLine(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBeNull();
    expect(oneLine('a string')).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { DEFAULT_BUILD_MEMORY_MB, memoryShares, storeOptions } from '../../../src/config/memory-budget.js';

describe('the batch jobs’ memory budget', () => {
  it('gives DuckDB 40% of it, never under 512 MB', () => {
    expect(memoryShares(DEFAULT_BUILD_MEMORY_MB)).toEqual({ duckdbMb: 1000 });
    expect(memoryShares(8000)).toEqual({ duckdbMb: 3200 });
    expect(memoryShares(1024)).toEqual({ duckdbMb: 512 });
    expect(storeOptions(1500)).toEqual({ memoryLimit: '600MB' });
  });
});

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_BUILD_MEMORY_MB,
  duckdbLimitNow,
  memoryShares,
  storeOptions,
} from '../../../src/config/memory-budget.js';

describe('the batch jobs’ memory budget', () => {
  it('gives DuckDB 40% of it, never under 512 MB', () => {
    expect(memoryShares(DEFAULT_BUILD_MEMORY_MB)).toEqual({ duckdbMb: 1000 });
    expect(memoryShares(8000)).toEqual({ duckdbMb: 3200 });
    expect(memoryShares(1024)).toEqual({ duckdbMb: 512 });
    expect(storeOptions(1500)).toEqual({ memoryLimit: '600MB', budgetMb: 1500 });
  });

  it("fits DuckDB's limit to what the budget leaves beside the process, within its least and its share", () => {
    // 1M works: the build holds little, DuckDB keeps its share.
    expect(duckdbLimitNow(2500, 600, 100)).toBe(1000);
    // 1,300 MB held outside DuckDB, 200 of headroom.
    expect(duckdbLimitNow(2500, 1300, 100)).toBe(1000);
    expect(duckdbLimitNow(2500, 1500, 100)).toBe(900);
    // Never below the least DuckDB's joins of the references ran with at 10M works.
    expect(duckdbLimitNow(2500, 1800, 240)).toBe(768);
    expect(duckdbLimitNow(2500, 3000, 0)).toBe(768);
    // Nor above its share, when the budget's share is under that least.
    expect(duckdbLimitNow(1500, 1800, 240)).toBe(600);
  });
});

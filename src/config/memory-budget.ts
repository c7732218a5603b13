/**
 * The memory budget of the batch jobs (`ri ingest`, `ri build`, `ri update`, `ri pull`):
 * BUILD_MEMORY_MB, split between the parts that take memory in proportion to what they are given
 * rather than to the corpus. DuckDB spills to disk past its `memory_limit`, so its share bounds
 * the ingest's merges and the build's joins and sorts whatever the corpus size; the rest is the
 * build's own columns and threads (docs/scale.md says what they take per work).
 */

/** The default budget: room for a serving replica (<= 1.5 GB) beside it on a 4 GB machine. */
export const DEFAULT_BUILD_MEMORY_MB = 2500;

/** DuckDB's share of the budget; below DUCKDB_LEAST_MB, some of its joins cannot run at all. */
const DUCKDB_SHARE = 0.4;
const DUCKDB_LEAST_MB = 512;

export interface MemoryShares {
  /** DuckDB's memory_limit, in MB. */
  duckdbMb: number;
}

/** How a budget (MB) is shared: 2500 MB gives DuckDB 1000 MB, as it had before the budget. */
export function memoryShares(budgetMb: number): MemoryShares {
  return { duckdbMb: Math.max(DUCKDB_LEAST_MB, Math.round(budgetMb * DUCKDB_SHARE)) };
}

/**
 * What DuckDB's limit leaves for DuckDB's own overheads outside its buffer manager (about 50 MB
 * measured at 1M works) and for the JavaScript side's growth during the phase.
 */
const HEADROOM_MB = 200;

/**
 * The least DuckDB's limit is fitted down to: at 10M works its joins of every reference to the
 * ordinals failed at 488 and 572 MB and ran at 954.
 */
const DUCKDB_FITTED_LEAST_MB = 768;

/**
 * DuckDB's limit for the build's next phase: what the budget leaves beside what the process holds
 * outside DuckDB now (`processMb` resident, of which `duckdbMb` is DuckDB's), within [768 MB,
 * its share]. The build's own columns grow with the corpus (about 1.6 GB at 10M works), so at
 * 10M DuckDB spills more, down to that floor; at 1M it keeps its share.
 *   2,500 MB budget, 600 MB resident, 100 of them DuckDB's  -> 1,000 (its share)
 *   2,500 MB budget, 1,800 MB resident, 240 of them DuckDB's -> 740, raised to 768
 */
export function duckdbLimitNow(budgetMb: number, processMb: number, duckdbMb: number): number {
  const left = budgetMb - (processMb - duckdbMb) - HEADROOM_MB;
  return Math.round(Math.min(memoryShares(budgetMb).duckdbMb, Math.max(DUCKDB_FITTED_LEAST_MB, left)));
}

/** The corpus store's options for a budget (CorpusStore.open). */
export function storeOptions(budgetMb: number): { memoryLimit: string; budgetMb: number } {
  return { memoryLimit: `${memoryShares(budgetMb).duckdbMb}MB`, budgetMb };
}

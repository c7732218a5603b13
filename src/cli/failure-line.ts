import { DEFAULT_BUILD_MEMORY_MB } from '../config/memory-budget.js';

/**
 * A full or failing disk (Node's codes and SQLite's, and the messages of drivers that give no
 * code): the user's to fix, so one line, never a stack trace.
 */
const DISK_CODE = /^(ENOSPC|EIO|EDQUOT|EROFS|SQLITE_FULL|SQLITE_IOERR\w*|SQLITE_READONLY\w*)$/;
const DISK_MESSAGE = /no space left on device|input\/output error|database or disk is full|disk I\/O error/i;
/** DuckDB past its memory_limit, which the batch jobs' budget sets (config/memory-budget.ts). */
const DUCKDB_MEMORY = /^(Out of Memory Error: .*)$/;

/** The one line for an error that is not a fault of ri's own, else null (a bug: its stack). */
export function oneLine(error: unknown, env: NodeJS.ProcessEnv = process.env): string | null {
  if (!(error instanceof Error)) return null;
  const first = error.message.split('\n')[0]!;
  // config.ts: a bad configuration value, exit 1 (exit 2 is for bad command-line arguments).
  if (error.name === 'ConfigError') return first;
  // state-deadline.ts: the store's own failure is in `reason` (the message is the HTTP answer's).
  const state = error as Error & { operation?: unknown; reason?: unknown };
  if (error.name === 'StateUnavailableError' && typeof state.reason === 'string') {
    return `the state store failed (${String(state.operation)}): ${state.reason}`;
  }
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && DISK_CODE.test(code))
    return first.includes(code) ? first : `${first} (${code})`;
  // At 10M works a share of 572 MB (BUILD_MEMORY_MB=1500) is too small to stage the references.
  const memory = DUCKDB_MEMORY.exec(first);
  if (memory)
    return `${memory[1]} (DuckDB's share of the batch jobs' memory budget, BUILD_MEMORY_MB=${env.BUILD_MEMORY_MB ?? DEFAULT_BUILD_MEMORY_MB}, is too small for this corpus: raise BUILD_MEMORY_MB; docs/operations.md)`;
  return DISK_MESSAGE.test(first) ? first : null;
}

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Where pulling from the OpenAlex API stands, kept in DATA_DIR: the cursor of a pull in progress
 * (so an interrupted one goes on where its last merged page ended) and the updated_date the next
 * pull starts from. Written after each merged batch, atomically (write, rename).
 */
export interface PullState {
  /** The API the cursor belongs to. */
  api_url: string;
  /** The user's OpenAlex filter, kept for the next pulls (null: none). */
  filter: string | null;
  /** from_updated_date of the pull in progress, or of the last one. */
  since: string;
  /** The next page of the pull in progress ('*' before its first); null when none is in progress. */
  cursor: string | null;
  /** Pages and records merged so far by the pull in progress (or the last one). */
  pages: number;
  records: number;
  /** The newest updated_date merged by the pull in progress (or the last one). */
  max_updated_date: string;
  /** Where the next pull starts; set when a pull completes. */
  next_since: string | null;
  completed_at: string | null;
}

export function readPullState(path: string): PullState | null {
  if (!existsSync(path)) return null;
  try {
    const state = JSON.parse(readFileSync(path, 'utf8')) as PullState;
    return typeof state.since === 'string' ? state : null;
  } catch {
    return null;
  }
}

export function writePullState(path: string, state: PullState): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(tmp, path);
}

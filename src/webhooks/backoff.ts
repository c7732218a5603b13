/**
 * When a failed delivery is tried again: exponential backoff (the first retry after `baseMs`,
 * each next one twice as late, none more than MAX_DELAY_MS apart) for `forMs` after the event
 * was made (a day by default); past that the event is marked failed and no longer tried.
 */

/** The longest wait between two attempts, so that a receiver back up is reached within hours. */
const MAX_DELAY_MS = 6 * 60 * 60 * 1000;

export interface Backoff {
  /** The wait after the first failed attempt (WEBHOOK_RETRY_BASE_MS). */
  baseMs: number;
  /** How long after the event was made attempts go on (WEBHOOK_RETRY_FOR_MS). */
  forMs: number;
}

/** The wait after the `attempts`-th failed attempt (1-based). */
export function retryDelay(attempts: number, backoff: Backoff): number {
  return Math.min(backoff.baseMs * 2 ** Math.max(0, attempts - 1), MAX_DELAY_MS);
}

/**
 * When to try an event made at `createdAtMs` again after its `attempts`-th failed attempt at
 * `nowMs`, or null when that would be past the retry window (the event then fails).
 */
export function nextAttemptAt(
  createdAtMs: number,
  attempts: number,
  nowMs: number,
  backoff: Backoff,
): number | null {
  const at = nowMs + retryDelay(attempts, backoff);
  return at > createdAtMs + backoff.forMs ? null : at;
}

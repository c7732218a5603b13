import { describe, expect, it } from 'vitest';
import { nextAttemptAt, retryDelay } from '../../../src/webhooks/backoff.js';

const DAY = 86_400_000;

describe('the retry schedule', () => {
  it('doubles from the base, at most six hours apart', () => {
    const backoff = { baseMs: 30_000, forMs: DAY };
    expect([1, 2, 3, 4, 5].map((n) => retryDelay(n, backoff))).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000,
    ]);
    expect(retryDelay(20, backoff)).toBe(6 * 3_600_000);
  });

  it('goes on for a day after the event, then stops (the event fails)', () => {
    const backoff = { baseMs: 30_000, forMs: DAY };
    const created = 0;
    let at = created;
    const attempts: number[] = [];
    for (let n = 1; n < 100; n++) {
      const next = nextAttemptAt(created, n, at, backoff);
      if (next === null) break;
      attempts.push(next);
      at = next;
    }
    // 30 s, 1, 2, 4, 8, 16, 32, 64, 128, 256 min, then 6 h apart: the last one within the day.
    expect(attempts.length).toBe(12);
    expect(attempts.at(-1)!).toBeLessThanOrEqual(DAY);
    expect(attempts.at(-1)! + 6 * 3_600_000).toBeGreaterThan(DAY);
    expect(attempts.slice(0, 3)).toEqual([30_000, 90_000, 210_000]);
  });

  it('takes a short schedule from the configuration (the tests)', () => {
    const backoff = { baseMs: 50, forMs: 1_000 };
    expect(nextAttemptAt(0, 1, 10, backoff)).toBe(60);
    expect(nextAttemptAt(0, 5, 900, backoff)).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { StateUnavailableError, stateFault, withDeadline } from '../../../src/access/state-deadline.js';

/** A 503 state_unavailable says what happened to the store, not always "did not answer in time". */
const failing = (error: Error) =>
  withDeadline(
    {
      saveQuote: async () => {
        throw error;
      },
      stalled: () => new Promise<never>(() => {}),
    },
    { timeoutMs: 20 },
  );

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('what a state_unavailable says of its cause', () => {
  it.each([
    ['SQLite on a full disk', coded('database or disk is full', 'SQLITE_FULL')],
    ['PostgreSQL disk_full', coded('could not extend file: No space left on device', '53100')],
    ['a write on a full disk', coded('ENOSPC: no space left on device, write', 'ENOSPC')],
  ])("%s: the store's disk is full (still 503 with Retry-After, nothing charged)", async (_name, cause) => {
    const error = (await failing(cause)
      .saveQuote()
      .catch((e: unknown) => e)) as StateUnavailableError;
    expect(error).toBeInstanceOf(StateUnavailableError);
    expect(error).toMatchObject({
      code: 'state_unavailable',
      status: 503,
      fault: 'disk_full',
      headers: { 'retry-after': '2' },
    });
    expect(error.detail).toMatch(/disk is full/);
    expect(error.detail).toMatch(/nothing was charged/);
    expect(error.detail).not.toMatch(/in time/);
  });

  it('a store that cannot be reached says so, not that it was slow', async () => {
    for (const cause of [
      coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
      coded('terminating connection due to administrator command', '57P01'),
      new Error('Connection terminated unexpectedly'),
      coded('unable to open database file', 'SQLITE_CANTOPEN'),
    ]) {
      const error = (await failing(cause)
        .saveQuote()
        .catch((e: unknown) => e)) as StateUnavailableError;
      expect([cause.message, error.fault, error.detail]).toEqual([
        cause.message,
        'unreachable',
        expect.stringMatching(/^The accounts and keys store cannot be reached; nothing was charged/),
      ]);
    }
  });

  it('no answer within the deadline (or a lock held past it) is "did not answer in time"', async () => {
    const late = (await failing(new Error('unused'))
      .stalled()
      .catch((e: unknown) => e)) as StateUnavailableError;
    expect(late).toMatchObject({ fault: 'no_answer', reason: 'no answer within 20 ms' });
    expect(late.detail).toMatch(/did not answer in time; nothing was charged/);
    for (const cause of [
      coded('database is locked', 'SQLITE_BUSY'),
      coded('canceling statement due to statement timeout', '57014'),
    ])
      expect(stateFault(cause)).toBe('no_answer');
  });

  it('another failure of the store is its own error, neither slow nor full', () => {
    for (const cause of [coded('disk I/O error', 'SQLITE_IOERR_WRITE'), coded('out of memory', '53200')]) {
      expect(stateFault(cause)).toBe('failed');
      expect(new StateUnavailableError('x', cause.message, 'failed').detail).toMatch(
        /failed with an error of its own; nothing was charged/,
      );
    }
    // An error of the request is not the store's.
    expect(stateFault(coded('duplicate key value', '23505'))).toBeNull();
    expect(stateFault(new TypeError('x is undefined'))).toBeNull();
  });

  it('met while a payment is settled, it does not say nothing was charged: it says how to get the answer', () => {
    const error = new StateUnavailableError(
      'findPayment',
      'database or disk is full',
      'disk_full',
    ).whileSettling('Repeat this same request with the same PAYMENT-SIGNATURE header');
    expect(error).toMatchObject({
      code: 'state_unavailable',
      fault: 'disk_full',
      headers: { 'retry-after': '2' },
    });
    expect(error.detail).toMatch(/disk is full/);
    expect(error.detail).toMatch(/may have been taken/);
    expect(error.detail).toMatch(
      /Repeat this same request with the same PAYMENT-SIGNATURE header to get the answer/,
    );
    expect(error.detail).not.toMatch(/nothing was charged/i);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { emptyState } from '../helpers/app.js';

/**
 * knownKey(): the SQLite store's answer for a key from memory alone, the same as authenticate()
 * gives, or undefined whenever authenticate() would read or write the file. The clock is held
 * still: the lookups are trusted for a millisecond after the data version was read.
 */
type Known = { knownKey(key: string): unknown };

afterEach(() => {
  vi.restoreAllMocks();
});

describe('knownKey', () => {
  it('answers as authenticate() did, and nothing it would have to read for', async () => {
    const now = vi.spyOn(performance, 'now').mockReturnValue(1_000);
    const state = await emptyState();
    const known = state as unknown as Known;
    const account = await state.createAccount({ email: 'k@example.org', plan: 'personal' });
    const { key, prefix } = await state.createKey(account.id);
    expect(known.knownKey(key)).toBeUndefined(); // never looked up
    expect(known.knownKey('not a key')).toBeUndefined();
    const info = await state.authenticate(key);
    expect(info?.plan).toBe('personal');
    expect(known.knownKey(key)).toEqual(info);
    // Past the data version's freshness: authenticate() would read it again.
    now.mockReturnValue(1_002);
    expect(known.knownKey(key)).toBeUndefined();
    expect(await state.authenticate(key)).toEqual(info);
    expect(known.knownKey(key)).toEqual(info);
    // A write through the store forgets every lookup: a revoked key is never known.
    await state.revokeKey(prefix);
    expect(known.knownKey(key)).toBeUndefined();
    expect(await state.authenticate(key)).toBeNull();
    expect(known.knownKey(key)).toBeUndefined();
    await state.close();
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteStateStore } from '../../../src/access/sqlite-state-store.js';

/**
 * knownKey(): the SQLite store's answer for a key without a write, the same as authenticate()
 * gives, or undefined whenever authenticate() would have to query or write the file. The clock
 * (performance.now) is held still and moved by hand: the lookups are trusted for a millisecond
 * after the data version was read, and knownKey reads it itself when that millisecond is over.
 */
afterEach(() => {
  vi.restoreAllMocks();
});

async function withStore(run: (store: SqliteStateStore, path: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ri-known-'));
  const path = join(dir, 'state.sqlite');
  const store = new SqliteStateStore(path);
  await store.migrate();
  try {
    await run(store, path);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('knownKey', () => {
  it('answers as authenticate() did, and nothing it would have to query for', async () => {
    const now = vi.spyOn(performance, 'now').mockReturnValue(1_000);
    await withStore(async (store) => {
      const account = await store.createAccount({ email: 'k@example.org', plan: 'personal' });
      const { key, prefix } = await store.createKey(account.id);
      expect(store.knownKey(key)).toBeUndefined(); // never looked up
      expect(store.knownKey('not a key')).toBeUndefined();
      const info = await store.authenticate(key);
      expect(info?.plan).toBe('personal');
      expect(store.knownKey(key)).toEqual(info);
      // Past the data version's freshness, nothing committed elsewhere: still known, without authenticate().
      now.mockReturnValue(1_002);
      expect(store.knownKey(key)).toEqual(info);
      // A write through the store forgets every lookup: a revoked key is never known.
      await store.revokeKey(prefix);
      expect(store.knownKey(key)).toBeUndefined();
      expect(await store.authenticate(key)).toBeNull();
      expect(store.knownKey(key)).toBeUndefined();
    });
  });

  it('forgets a key once another connection has committed, when it next reads the data version', async () => {
    const now = vi.spyOn(performance, 'now').mockReturnValue(5_000);
    await withStore(async (store, path) => {
      const account = await store.createAccount({ email: 'w@example.org', plan: 'free' });
      const { key, prefix } = await store.createKey(account.id);
      const info = await store.authenticate(key);
      expect(info?.plan).toBe('free');
      // As `ri keys revoke` does, from another process.
      const writer = new Database(path);
      writer
        .prepare('UPDATE api_keys SET revoked_at = ? WHERE prefix = ?')
        .run(new Date().toISOString(), prefix);
      writer.close();
      // Within the millisecond the lookups are trusted: the answer from before.
      expect(store.knownKey(key)).toEqual(info);
      now.mockReturnValue(5_001);
      expect(store.knownKey(key)).toBeUndefined();
      expect(await store.authenticate(key)).toBeNull();
      expect(store.knownKey(key)).toBeUndefined();
    });
  });
});

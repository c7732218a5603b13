import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openStateStore } from '../../../src/access/open-state-store.js';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { createApp } from '../../../src/http/app.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { bearer } from '../../helpers/app.js';
import { fillDiskUnder, smallDisk } from '../../helpers/full-disk.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

/**
 * A state store that cannot write (a full disk) still authenticates keys: authentication only
 * reads, and the key's last_used_at, a bookkeeping write, is done aside the answer, its failure
 * logged. Keys used for the first time (last_used_at due) are the ones that used to get 503.
 */
const PG = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A real full disk: a small tmpfs (needs root; the SQLite half is skipped without it). */
const { dir: disk, mounted, remove } = smallDisk('ri-full-disk-');

let snapshots: SnapshotManager;
const config = loadConfig({}, { PUBLIC_URL: 'https://ri.example' });

beforeAll(async () => {
  const sample = await sampleDataDir();
  snapshots = new SnapshotManager(sample.snapshots);
  await snapshots.start();
}, 60_000);

afterAll(() => {
  snapshots?.stop();
  remove();
});

type Logged = [string, Record<string, unknown>];

async function keyedReads(state: StateStore, logs: Logged[], code: string) {
  const account = await state.createAccount({
    email: `full-${randomBytes(3).toString('hex')}@example.org`,
    plan: 'personal',
  });
  const { key } = await state.createKey(account.id);
  const professional = await state.createAccount({
    email: `full-pro-${randomBytes(3).toString('hex')}@example.org`,
    plan: 'professional',
  });
  const { key: proKey } = await state.createKey(professional.id);
  return {
    key,
    async check() {
      const app = createApp({ config, snapshots, state });
      for (let i = 0; i < 2; i++) {
        const res = await app.request('/v1/elements/Fe/history', bearer(key));
        expect([i, res.status, res.status === 200 ? '' : await res.text()]).toEqual([i, 200, '']);
      }
      // The key lookup itself still decides: an unknown key is refused.
      const unknown = await app.request('/v1/elements/Fe/history', bearer(`ri_abcdefgh_${'A'.repeat(43)}`));
      expect(unknown.status).toBe(401);
      // The failed write is in the log, with its cause.
      await vi.waitFor(() =>
        expect(logs).toContainEqual([
          expect.stringMatching(/bookkeeping write failed/),
          expect.objectContaining({ operation: 'last_used_at', code }),
        ]),
      );
      // A call that must write (a lab quote is stored) answers 503 state_unavailable, saying the
      // store's disk is full rather than that it did not answer in time.
      const quote = await app.request('/v1/lab/quote?q=Fe', bearer(proKey));
      const problem = (await quote.json()) as { code: string; detail: string };
      expect([quote.status, problem.code]).toEqual([503, 'state_unavailable']);
      expect(quote.headers.get('retry-after')).toBe('2');
      expect(problem.detail).toMatch(/store's disk is full/);
      expect(problem.detail).toMatch(/nothing was charged/);
      expect(problem.detail).not.toMatch(/in time/);
    },
  };
}

describe('a state store that cannot write', () => {
  it.skipIf(!mounted)(
    'SQLite on a full disk: keyed reads answer 200, the failed write is logged',
    async () => {
      const logs: Logged[] = [];
      const state = await openStateStore(undefined, disk, { log: (m, f) => logs.push([m, f]) });
      try {
        const reads = await keyedReads(state, logs, 'SQLITE_FULL');
        // The disk under the state file filled: the file cannot be written.
        const filled = fillDiskUnder(join(disk, 'state.sqlite'));
        const writer = new Database(join(disk, 'state.sqlite'));
        try {
          expect(() => writer.prepare("UPDATE accounts SET plan = 'enterprise'").run()).toThrow(/full/i);
        } finally {
          writer.close();
          filled.close();
        }
        await reads.check();
      } finally {
        await state.close();
      }
    },
  );

  it('PostgreSQL refusing writes (53100 disk full): keyed reads answer 200, the failed write is logged', async () => {
    const schema = `ri_full_${randomBytes(5).toString('hex')}`;
    const logs: Logged[] = [];
    const state = await openStateStore(`${PG}?schema=${schema}`, tempDir(), {
      log: (m, f) => logs.push([m, f]),
    });
    const admin = new pg.Client({ connectionString: PG, options: `-c search_path=${schema}` });
    await admin.connect();
    try {
      const reads = await keyedReads(state, logs, '53100');
      // What PostgreSQL answers a write when its disk is full.
      await admin.query(`CREATE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$`);
      for (const table of ['api_keys', 'quotes'])
        await admin.query(
          `CREATE TRIGGER full_disk BEFORE INSERT OR UPDATE ON ${table} FOR EACH ROW EXECUTE FUNCTION refuse_write()`,
        );
      await reads.check();
    } finally {
      await state.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    }
  });
});

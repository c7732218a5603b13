/**
 * The shared migrations list (src/access/state-migrations.ts) against databases made by the release
 * before it: test/fixtures/state-v5/*.sql are dumps (sqlite3 .dump, pg_dump) of a state store that
 * release migrated to version 5 and then wrote to (an account, a key, a settled payment with a
 * payment identifier, a quote, the quote secret, usage). The new code must recognise every applied
 * version, serve the old rows, and make a fresh database with the same schema.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PostgresStateStore } from '../../../src/access/postgres-state-store.js';
import { SqliteStateStore } from '../../../src/access/sqlite-state-store.js';
import { MIGRATIONS } from '../../../src/access/state-migrations.js';
import type { StateStore } from '../../../src/access/state-store.js';

const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const FIXTURES = join(import.meta.dirname, '../../fixtures/state-v5');

/** The version-5 release's names, as its databases hold them. */
const RELEASED = [
  [1, 'accounts and api keys'],
  [2, 'lab quotes and shared secrets'],
  [3, 'payments ledger'],
  [4, 'web accounts: key names, usage, sign-in links, sessions'],
  [5, 'payment identifiers (x402 payment-identifier: idempotent retries)'],
];

interface Made {
  store: StateStore;
  /** What the database's catalogue says of its tables, indexes and constraints, comparable across databases. */
  schema(): Promise<unknown>;
  rows(sql: string): Promise<Record<string, unknown>[]>;
}

interface Backend {
  name: string;
  /** The key the old release created in the fixture (its sha256 is in the dump). */
  oldKey: string;
  /** A store on a database loaded from the fixture (or empty when `fixture` is false), not migrated. */
  make(fixture: boolean): Promise<Made>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const sqlite: Backend = {
  name: 'SQLite',
  oldKey: 'ri_zj656dcy_oAked0aT7pTABUl7-PZDnMds0SVGLYW4aPQ1hlO6Alo',
  async make(fixture) {
    const dir = mkdtempSync(join(tmpdir(), 'ri-migrations-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'state.sqlite');
    if (fixture) {
      const db = new Database(path);
      db.exec(readFileSync(join(FIXTURES, 'sqlite.sql'), 'utf8'));
      db.close();
    }
    const store = new SqliteStateStore(path);
    cleanups.push(() => store.close());
    const rows = async (sql: string) => {
      const db = new Database(path, { readonly: true });
      try {
        return db.prepare(sql).all() as Record<string, unknown>[];
      } finally {
        db.close();
      }
    };
    return {
      store,
      rows,
      // SQLite keeps each CREATE statement's text: compared without case and white space.
      schema: async () =>
        (
          await rows(
            `SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name <> 'schema_migrations' ORDER BY name`,
          )
        ).map((r) => ({ ...r, sql: String(r.sql).toLowerCase().replace(/\s+/g, '') })),
    };
  },
};

const postgres: Backend = {
  name: 'PostgreSQL',
  oldKey: 'ri_ei018dqs_Ubux3Oh8DcUjkz-WpcCNv7l09i_qqPeLPJ0MfIjf32o',
  async make(fixture) {
    const schema = `ri_test_${randomBytes(6).toString('hex')}`;
    const query = async (sql: string, values?: unknown[]) => {
      const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
      await client.connect();
      try {
        return (await client.query(sql, values)).rows as Record<string, unknown>[];
      } finally {
        await client.end();
      }
    };
    cleanups.push(async () => {
      await query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    });
    if (fixture) {
      const dump = readFileSync(join(FIXTURES, 'postgres.sql'), 'utf8').replaceAll('__SCHEMA__', schema);
      await query(`CREATE SCHEMA "${schema}"; ${dump}`);
    }
    const store = new PostgresStateStore({ connectionString: PG_URL, schema, max: 2 });
    cleanups.push(() => store.close());
    const unqualified = (rows: Record<string, unknown>[]) =>
      rows.map((r) => JSON.parse(JSON.stringify(r).replaceAll(`${schema}.`, '')));
    return {
      store,
      rows: query,
      schema: async () => ({
        columns: await query(
          `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
            WHERE table_schema = $1 ORDER BY table_name, column_name`,
          [schema],
        ),
        indexes: unqualified(
          await query(
            'SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 2',
            [schema],
          ),
        ),
        constraints: unqualified(
          await query(
            `SELECT c.relname, k.conname, pg_get_constraintdef(k.oid) AS def
               FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
              WHERE k.connamespace = $1::regnamespace ORDER BY 2`,
            [schema],
          ),
        ),
      }),
    };
  },
};

for (const backend of [sqlite, postgres]) {
  describe(`state migrations: ${backend.name}`, () => {
    it('the shared list keeps the released versions and names', () => {
      expect(MIGRATIONS.slice(0, RELEASED.length).map((m) => [m.version, m.name])).toEqual(RELEASED);
    });

    it("a database made by the release before the shared list opens as it is and serves that release's rows", async () => {
      const { store, rows } = await backend.make(true);
      await store.migrate();
      await store.migrate();
      const applied = await rows('SELECT version, name FROM schema_migrations ORDER BY version');
      expect(applied.map((r) => [r.version, r.name])).toEqual(MIGRATIONS.map((m) => [m.version, m.name]));

      const key = await store.authenticate(backend.oldKey);
      expect(key).toMatchObject({ email: 'old@example.org', plan: 'personal', name: 'made by the old code' });
      const account = await store.findAccountByEmail('old@example.org');
      expect(await store.usage(account!.id, '2026-11')).toEqual(new Map([[key!.prefix, 7]]));
      expect(await store.findQuote('q-old')).toBe('{"quote_id":"q-old"}');
      expect(await store.secret('quote-signing', () => 'new-secret')).toBe('old-secret');
      // A row from before migration 6 has no signed payment to match: it is never answered again.
      expect(await store.findPaymentById('pid-old-1')).toMatchObject({
        id: 'pay-old-1',
        status: 'settled',
        payloadHash: '',
        dataVersion: null,
      });

      // The old partial unique indexes still refuse a second use of the nonce and of the identifier.
      const again = {
        id: 'pay-new-1',
        operation: 'labRun',
        resource: '/v1/lab/run',
        amount: '10000',
        network: 'eip155:84532',
        asset: '0xasset',
        payer: '0xpayer',
        payloadHash: 'ab'.repeat(32),
        validUntil: new Date().toISOString(),
        dataVersion: '0123456789abcdef',
      };
      expect(await store.recordPayment({ ...again, nonce: '0xpayer:0x01' })).toBe(false);
      expect(await store.recordPayment({ ...again, nonce: '0xpayer:0x02', paymentId: 'pid-old-1' })).toBe(
        false,
      );
      expect(await store.recordPayment({ ...again, nonce: '0xpayer:0x02', paymentId: 'pid-new-1' })).toBe(
        true,
      );
      const created = await store.createKey(account!.id, 'made by the new code');
      expect(await store.authenticate(created.key)).toMatchObject({ name: 'made by the new code' });
    });

    it('a fresh database gets the schema a migrated database of the release before the shared list has', async () => {
      const old = await backend.make(true);
      await old.store.migrate();
      const fresh = await backend.make(false);
      await fresh.store.migrate();
      expect(await fresh.schema()).toEqual(await old.schema());
    });
  });
}

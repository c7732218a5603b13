import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateApiKey, hashApiKey, hashesEqual, parseApiKey } from '../../../src/access/api-keys.js';
import { openStateStore } from '../../../src/access/open-state-store.js';
import type { NewPayment } from '../../../src/access/payment-ledger.js';
import { PLANS, parsePlan, UnknownPlanError } from '../../../src/access/plans.js';
import { PostgresStateStore } from '../../../src/access/postgres-state-store.js';
import { SqliteStateStore } from '../../../src/access/sqlite-state-store.js';
import {
  AccountExistsError,
  StateNotFoundError,
  type StateStore,
  StateUrlError,
} from '../../../src/access/state-store.js';

/** CI starts PostgreSQL; when it is not reachable the PostgreSQL half fails (it does not skip). */
const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** One empty database of a backend: opens any number of store instances on it. */
interface TestDatabase {
  /** A new store instance on this database, not yet migrated. */
  open(): StateStore;
  /** Raw rows, bypassing the store (to look at what is really stored). */
  rows(sql: string): Promise<Record<string, unknown>[]>;
  drop(): Promise<void>;
}

interface Backend {
  name: string;
  createDatabase(): Promise<TestDatabase>;
}

const sqliteBackend: Backend = {
  name: 'SQLite',
  async createDatabase() {
    const dir = mkdtempSync(join(tmpdir(), 'ri-state-'));
    const path = join(dir, 'state.sqlite');
    return {
      open: () => new SqliteStateStore(path),
      async rows(sql) {
        const db = new Database(path, { readonly: true });
        try {
          return db.prepare(sql).all() as Record<string, unknown>[];
        } finally {
          db.close();
        }
      },
      async drop() {
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const postgresBackend: Backend = {
  name: 'PostgreSQL',
  async createDatabase() {
    const schema = `ri_test_${randomBytes(6).toString('hex')}`;
    // Fails here (and so fails the suite) when PostgreSQL is not reachable.
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.end();
    return {
      open: () => new PostgresStateStore({ connectionString: PG_URL, schema, max: 4 }),
      async rows(sql) {
        const client = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
        await client.connect();
        try {
          return (await client.query(sql)).rows as Record<string, unknown>[];
        } finally {
          await client.end();
        }
      },
      async drop() {
        const client = new pg.Client({ connectionString: PG_URL });
        await client.connect();
        try {
          await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await client.end();
        }
      },
    };
  },
};

function uniqueEmail(tag: string): string {
  return `${tag}-${randomBytes(4).toString('hex')}@example.org`;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const newId = () => `pay_${randomBytes(8).toString('hex')}`;

/** A ledger row with a fresh id and a fresh nonce (the suite shares one database across tests). */
function newPayment(): NewPayment {
  const payer = `0x${randomBytes(20).toString('hex')}`;
  return {
    id: newId(),
    operation: 'getElementHistory',
    resource: 'https://api.example.org/v1/elements/Li/history',
    amount: '123456789012345678901234567890',
    network: 'eip155:84532',
    asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    payer,
    nonce: `${payer}:0x${randomBytes(32).toString('hex')}`,
    paymentId: null,
    payloadHash: randomBytes(32).toString('hex'),
    validUntil: new Date(Date.now() + 300_000).toISOString(),
    dataVersion: '0123456789abcdef',
  };
}

/** The one suite both implementations must pass. */
function stateStoreSuite(backend: Backend) {
  describe(`state store: ${backend.name}`, () => {
    let db: TestDatabase;
    let store: StateStore;
    let other: StateStore;
    const opened: StateStore[] = [];
    const extraDatabases: TestDatabase[] = [];

    async function openMigrated(on: TestDatabase = db): Promise<StateStore> {
      const s = on.open();
      opened.push(s);
      await s.migrate();
      return s;
    }

    beforeAll(async () => {
      db = await backend.createDatabase();
      store = await openMigrated();
      other = await openMigrated();
    });

    afterAll(async () => {
      for (const s of opened) await s.close();
      for (const d of [db, ...extraDatabases]) await d?.drop();
    });

    it('migrate is versioned and idempotent: a second run (and a second instance) changes nothing', async () => {
      const before = await db.rows('SELECT version, name FROM schema_migrations ORDER BY version');
      expect(before.length).toBeGreaterThanOrEqual(1);
      const account = await store.createAccount({ email: uniqueEmail('migrate'), plan: 'free' });
      const { key } = await store.createKey(account.id);
      await store.migrate();
      await other.migrate();
      expect(await db.rows('SELECT version, name FROM schema_migrations ORDER BY version')).toEqual(before);
      expect((await store.authenticate(key))?.accountId).toBe(account.id);
    });

    it('two instances migrating a fresh database at the same time do not race', async () => {
      const fresh = await backend.createDatabase();
      extraDatabases.push(fresh);
      const a = fresh.open();
      const b = fresh.open();
      opened.push(a, b);
      await Promise.all([a.migrate(), b.migrate(), a.migrate()]);
      const versions = await fresh.rows('SELECT version FROM schema_migrations');
      expect(new Set(versions.map((r) => Number(r.version))).size).toBe(versions.length);
      const account = await a.createAccount({ email: null, plan: 'free' });
      const { key } = await a.createKey(account.id);
      expect(await b.authenticate(key)).not.toBeNull();
    });

    it('creates accounts (email unique, normalised; anonymous accounts allowed) and finds them by email', async () => {
      const email = uniqueEmail('Create');
      const account = await store.createAccount({ email, plan: 'personal' });
      expect(account).toMatchObject({ email: email.toLowerCase(), plan: 'personal' });
      expect(account.id).toMatch(/\S/);
      expect(Number.isNaN(Date.parse(account.createdAt))).toBe(false);
      expect(await store.findAccountByEmail(email.toUpperCase())).toEqual(account);
      expect(await other.findAccountByEmail(email)).toEqual(account);
      expect(await store.findAccountByEmail(uniqueEmail('nobody'))).toBeNull();
      await expect(
        store.createAccount({ email: ` ${email.toUpperCase()} `, plan: 'free' }),
      ).rejects.toBeInstanceOf(AccountExistsError);
      const anon1 = await store.createAccount({ email: null, plan: 'free' });
      const anon2 = await store.createAccount({ email: null, plan: 'free' });
      expect(anon1.id).not.toBe(anon2.id);
      expect(anon1.email).toBeNull();
    });

    it('creates a key and authenticates it with the current plan of its account', async () => {
      const email = uniqueEmail('auth');
      const account = await store.createAccount({ email, plan: 'professional' });
      const { key, prefix } = await store.createKey(account.id);
      expect(parseApiKey(key)).toEqual({ prefix });
      const info = await store.authenticate(key);
      expect(info).toMatchObject({
        prefix,
        accountId: account.id,
        email,
        plan: 'professional',
        revokedAt: null,
      });
      expect(info).not.toHaveProperty('key');
      expect(info).not.toHaveProperty('hash');
      expect(info).not.toHaveProperty('key_hash');
      // A second key of the same account works independently.
      const second = await store.createKey(account.id);
      expect(second.prefix).not.toBe(prefix);
      expect((await store.authenticate(second.key))?.prefix).toBe(second.prefix);
    });

    it('refuses a key for an unknown account', async () => {
      await expect(store.createKey('no-such-account')).rejects.toBeInstanceOf(StateNotFoundError);
    });

    it('returns null for a wrong secret, an unknown key and malformed keys', async () => {
      const account = await store.createAccount({ email: null, plan: 'enterprise' });
      const { key, prefix } = await store.createKey(account.id);
      const secret = key.slice(`ri_${prefix}_`.length);
      const flipped = `${secret[0] === 'A' ? 'B' : 'A'}${secret.slice(1)}`;
      expect(await store.authenticate(`ri_${prefix}_${flipped}`)).toBeNull();
      expect(
        await store.authenticate(`ri_${prefix}_${generateApiKey().key.split('_').slice(2).join('_')}`),
      ).toBeNull();
      expect(await store.authenticate(generateApiKey().key)).toBeNull();
      // The right secret under another prefix is not the key either.
      const otherPrefix = prefix === 'aaaaaaaa' ? 'bbbbbbbb' : 'aaaaaaaa';
      expect(await store.authenticate(`ri_${otherPrefix}_${secret}`)).toBeNull();
      for (const bad of [
        '',
        'ri_',
        prefix,
        `ri_${prefix}`,
        `ri_${prefix}_`,
        `${key}x`,
        key.slice(0, -1),
        ` ${key}`,
        `Bearer ${key}`,
        key.toUpperCase(),
        `rk_${prefix}_${secret}`,
        `ri_${prefix.toUpperCase()}_${secret}`,
        `ri_${prefix}_${secret.slice(0, -1)}=`,
        "ri_' OR '1'='1",
      ]) {
        expect(await store.authenticate(bad), bad).toBeNull();
      }
      expect(await store.authenticate(key)).not.toBeNull();
    });

    it('revokes a key: refused at once, listed as revoked, and a second revoke is false', async () => {
      const account = await store.createAccount({ email: uniqueEmail('revoke'), plan: 'free' });
      const { key, prefix } = await store.createKey(account.id);
      const keep = await store.createKey(account.id);
      expect(await store.authenticate(key)).not.toBeNull();
      expect(await store.revokeKey(prefix)).toBe(true);
      expect(await store.authenticate(key)).toBeNull();
      expect(await store.revokeKey(prefix)).toBe(false);
      expect(await store.revokeKey('zzzzzzzz')).toBe(false);
      expect(await store.authenticate(keep.key)).not.toBeNull();
      const listed = (await store.listKeys()).find((k) => k.prefix === prefix);
      expect(listed?.revokedAt).not.toBeNull();
      expect(Number.isNaN(Date.parse(listed?.revokedAt ?? ''))).toBe(false);
    });

    it('a plan change is seen by authenticate at once (through this and another instance)', async () => {
      const email = uniqueEmail('plan');
      const account = await store.createAccount({ email, plan: 'free' });
      const { key } = await store.createKey(account.id);
      expect((await other.authenticate(key))?.plan).toBe('free');
      const updated = await store.setPlan(email.toUpperCase(), 'professional');
      expect(updated).toMatchObject({ id: account.id, plan: 'professional' });
      expect((await store.authenticate(key))?.plan).toBe('professional');
      expect((await other.authenticate(key))?.plan).toBe('professional');
      await other.setPlan(email, 'personal');
      expect((await store.authenticate(key))?.plan).toBe('personal');
      await expect(store.setPlan(uniqueEmail('missing'), 'free')).rejects.toBeInstanceOf(StateNotFoundError);
    });

    it('two instances on one database: created through one is seen by the other, revoked through one is refused by the other', async () => {
      const account = await store.createAccount({ email: null, plan: 'personal' });
      const { key, prefix } = await store.createKey(account.id);
      expect(await other.authenticate(key)).toMatchObject({ prefix, plan: 'personal' });
      expect(await other.revokeKey(prefix)).toBe(true);
      expect(await store.authenticate(key)).toBeNull();
      expect(await other.authenticate(key)).toBeNull();
      const fromOther = await other.createKey(account.id);
      expect(await store.authenticate(fromOther.key)).toMatchObject({ prefix: fromOther.prefix });
      expect((await store.listKeys()).map((k) => k.prefix)).toContain(fromOther.prefix);
    });

    it("names keys, lists and revokes one account's keys only", async () => {
      const mine = await store.createAccount({ email: uniqueEmail('mine'), plan: 'free' });
      const theirs = await store.createAccount({ email: uniqueEmail('theirs'), plan: 'free' });
      const a = await store.createKey(mine.id, 'laptop');
      const b = await store.createKey(theirs.id);
      const listed = await other.listKeys({ accountId: mine.id });
      expect(listed.map((k) => [k.prefix, k.name])).toEqual([[a.prefix, 'laptop']]);
      expect(await store.revokeKey(b.prefix, mine.id)).toBe(false);
      expect(await store.authenticate(b.key)).not.toBeNull();
      expect(await store.revokeKey(a.prefix, mine.id)).toBe(true);
      expect(await other.authenticate(a.key)).toBeNull();
    });

    it('feed tokens: made, found with the plan, revoked by their account only, stored as hashes', async () => {
      const mine = await store.createAccount({ email: uniqueEmail('feeds'), plan: 'personal' });
      const theirs = await store.createAccount({ email: uniqueEmail('feeds'), plan: 'free' });
      const { token, prefix } = await store.createFeedToken(mine.id);
      expect(token).toMatch(new RegExp(`^rif_${prefix}_[A-Za-z0-9_-]{43}$`));
      expect(await other.authenticateFeedToken(token)).toMatchObject({
        prefix,
        accountId: mine.id,
        plan: 'personal',
        revokedAt: null,
      });
      // Neither credential is taken for the other.
      const { key } = await store.createKey(mine.id);
      expect(await store.authenticateFeedToken(key)).toBeNull();
      expect(await store.authenticate(token)).toBeNull();
      // After the prefix: the secret's base64url may hold '_' itself.
      const secret = token.slice(`rif_${prefix}_`.length);
      // A wrong last character (never the right one: 'A' was right once in 64 runs).
      const wrong = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
      for (const bad of [`rif_${prefix}_${wrong}`, `rif_${prefix}_`, `${token} `])
        expect(await store.authenticateFeedToken(bad), bad).toBeNull();
      const stored = await db.rows('SELECT * FROM feed_tokens');
      expect(JSON.stringify(stored)).not.toContain(secret);
      expect(stored.map((r) => r.token_hash)).toContain(hashApiKey(token));
      // The plan is the account's as it is now.
      await store.setPlan(mine.email!, 'professional');
      expect((await store.authenticateFeedToken(token))?.plan).toBe('professional');
      expect(await store.revokeFeedToken(prefix, theirs.id)).toBe(false);
      expect(await other.authenticateFeedToken(token)).not.toBeNull();
      expect(await other.revokeFeedToken(prefix, mine.id)).toBe(true);
      expect(await store.authenticateFeedToken(token)).toBeNull();
      expect(await store.revokeFeedToken(prefix, mine.id)).toBe(false);
      const listed = await store.listFeedTokens(mine.id);
      expect(listed.map((t) => [t.prefix, t.revokedAt !== null])).toEqual([[prefix, true]]);
      expect(JSON.stringify(listed)).not.toContain(secret);
      await expect(store.createFeedToken('no-such-account')).rejects.toBeInstanceOf(StateNotFoundError);
      // Without an account (the command line): every account's tokens, revoked by prefix alone.
      const second = await store.createFeedToken(theirs.id);
      const all = (await other.listFeedTokens()).map((t) => [t.prefix, t.accountId]);
      expect(all).toEqual(
        expect.arrayContaining([
          [prefix, mine.id],
          [second.prefix, theirs.id],
        ]),
      );
      expect(await other.revokeFeedToken(second.prefix)).toBe(true);
      expect(await store.authenticateFeedToken(second.token)).toBeNull();
      expect(await other.revokeFeedToken(second.prefix)).toBe(false);
    });

    it('adds calls per key and month across instances; unknown prefixes are ignored', async () => {
      const account = await store.createAccount({ email: uniqueEmail('usage'), plan: 'free' });
      const { prefix } = await store.createKey(account.id);
      await store.addUsage(
        '2026-11',
        new Map([
          [prefix, 3],
          ['zzzzzzzz', 9],
        ]),
      );
      await other.addUsage('2026-11', new Map([[prefix, 4]]));
      await other.addUsage('2026-10', new Map([[prefix, 1]]));
      expect(await store.usage(account.id, '2026-11')).toEqual(new Map([[prefix, 7]]));
      expect(await other.usage(account.id, '2026-10')).toEqual(new Map([[prefix, 1]]));
      expect(await other.usage(account.id, '2026-09')).toEqual(new Map());
    });

    it('a sign-in token is taken once, by one instance, and not after it expires', async () => {
      const hash = randomBytes(32).toString('hex');
      const email = uniqueEmail('signin');
      await store.saveSignInToken(hash, email.toUpperCase(), new Date(Date.now() + 60_000).toISOString());
      const taken = await Promise.all([store.takeSignInToken(hash), other.takeSignInToken(hash)]);
      expect(taken.filter((e) => e !== null)).toEqual([email]);
      expect(await store.takeSignInToken(hash)).toBeNull();
      const expired = randomBytes(32).toString('hex');
      await store.saveSignInToken(expired, email, new Date(Date.now() - 1000).toISOString());
      expect(await other.takeSignInToken(expired)).toBeNull();
    });

    it('keeps web sessions with their account as it is now, until they expire or are deleted', async () => {
      const email = uniqueEmail('session');
      const account = await store.createAccount({ email, plan: 'free' });
      const idHash = randomBytes(32).toString('hex');
      const expiresAt = new Date(Date.now() + 60_000).toISOString();
      await store.createSession({ idHash, accountId: account.id, csrf: 'c1', expiresAt });
      expect(await other.findSession(idHash)).toMatchObject({
        accountId: account.id,
        email,
        plan: 'free',
        csrf: 'c1',
      });
      await store.setPlan(email, 'personal');
      expect((await other.findSession(idHash))?.plan).toBe('personal');
      await other.deleteSession(idHash);
      expect(await store.findSession(idHash)).toBeNull();
      const old = randomBytes(32).toString('hex');
      await store.createSession({
        idHash: old,
        accountId: account.id,
        csrf: 'c2',
        expiresAt: new Date(Date.now() - 1000).toISOString(),
      });
      expect(await store.findSession(old)).toBeNull();
    });

    it('keeps lab quotes by id (a later copy replaces the older one) and shares them between instances', async () => {
      const id = `q_${randomBytes(6).toString('hex')}`;
      expect(await store.findQuote(id)).toBeNull();
      const later = new Date(Date.now() + 60_000).toISOString();
      await store.saveQuote({ id, body: '{"v":1}', expiresAt: later });
      expect(await other.findQuote(id)).toBe('{"v":1}');
      await other.saveQuote({ id, body: '{"v":2}', expiresAt: later });
      expect(await store.findQuote(id)).toBe('{"v":2}');
    });

    // Found by npm run soak: GET /v1/lab/run?quote_id=%00 was a 500 on PostgreSQL (text cannot hold NUL).
    it('a quote id or an email with a NUL byte (as a client may send one) is simply not found', async () => {
      expect(await store.findQuote('q_\u0000x')).toBeNull();
      expect(await store.findAccountByEmail('a\u0000@example.org')).toBeNull();
    });

    it('prunes quotes a day after they expired, and keeps recently expired ones (a run then says expired)', async () => {
      const old = `q_old_${randomBytes(4).toString('hex')}`;
      const recent = `q_recent_${randomBytes(4).toString('hex')}`;
      await store.saveQuote({
        id: old,
        body: '{}',
        expiresAt: new Date(Date.now() - 2 * 86_400_000).toISOString(),
      });
      await store.saveQuote({
        id: recent,
        body: '{}',
        expiresAt: new Date(Date.now() - 60_000).toISOString(),
      });
      await store.saveQuote({
        id: `q_${randomBytes(4).toString('hex')}`,
        body: '{}',
        expiresAt: new Date().toISOString(),
      });
      expect(await store.findQuote(old)).toBeNull();
      expect(await store.findQuote(recent)).toBe('{}');
    });

    it('a named secret is generated once and then the same for every instance', async () => {
      const name = `test_${randomBytes(4).toString('hex')}`;
      let calls = 0;
      const make = () => `secret-${++calls}-${randomBytes(8).toString('hex')}`;
      const first = await store.secret(name, make);
      expect(first).toMatch(/^secret-1-/);
      expect(await other.secret(name, make)).toBe(first);
      expect(await store.secret(name, make)).toBe(first);
    });

    it('two instances asking for a new secret at once agree on one value', async () => {
      const name = `race_${randomBytes(4).toString('hex')}`;
      const [a, b] = await Promise.all([
        store.secret(name, () => 'from-store'),
        other.secret(name, () => 'from-other'),
      ]);
      expect(a).toBe(b);
    });

    it('listKeys lists every key with its account, never the key or its hash', async () => {
      const email = uniqueEmail('list');
      const account = await store.createAccount({ email, plan: 'personal' });
      const a = await store.createKey(account.id);
      const b = await store.createKey(account.id);
      await store.revokeKey(b.prefix);
      await store.authenticate(a.key);
      // last_used_at is written aside the answer, a moment after authenticate() resolves.
      const keys = await vi.waitFor(async () => {
        const listed = await store.listKeys();
        expect(listed.find((k) => k.prefix === a.prefix)?.lastUsedAt).toBeTruthy();
        return listed;
      });
      const mine = keys.filter((k) => k.accountId === account.id);
      expect(mine.map((k) => k.prefix).sort()).toEqual([a.prefix, b.prefix].sort());
      const ka = mine.find((k) => k.prefix === a.prefix);
      expect(ka).toMatchObject({ email, plan: 'personal', revokedAt: null });
      const serialised = JSON.stringify(keys);
      for (const k of [a, b]) {
        expect(serialised).not.toContain(k.key);
        expect(serialised).not.toContain(k.key.split('_').slice(2).join('_'));
        expect(serialised).not.toContain(hashApiKey(k.key));
      }
      for (const k of keys) {
        expect(Object.keys(k).sort()).toEqual(
          ['accountId', 'createdAt', 'email', 'lastUsedAt', 'name', 'plan', 'prefix', 'revokedAt'].sort(),
        );
      }
    });

    it('stores only sha256(key), not the key or its secret', async () => {
      const account = await store.createAccount({ email: null, plan: 'free' });
      const { key, prefix } = await store.createKey(account.id);
      const secret = key.split('_').slice(2).join('_');
      const rows = await db.rows('SELECT * FROM api_keys');
      const row = rows.find((r) => r.prefix === prefix);
      expect(row).toBeDefined();
      expect(row?.key_hash).toBe(hashApiKey(key));
      expect(row?.key_hash).toMatch(/^[0-9a-f]{64}$/);
      for (const r of rows) {
        for (const value of Object.values(r)) {
          expect(String(value)).not.toContain(secret);
          expect(String(value)).not.toContain(key);
        }
      }
    });

    it('ledger: the payments migration is version 3', async () => {
      const rows = await db.rows('SELECT version, name FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => [Number(r.version), r.name])).toContainEqual([3, 'payments ledger']);
    });

    it('ledger: a recorded payment is pending, listed and found with every field', async () => {
      const before = Date.now();
      const p = newPayment();
      expect(await store.recordPayment(p)).toBe(true);
      const listed = (await store.listPayments()).find((r) => r.id === p.id);
      expect(listed).toEqual({
        ...p,
        status: 'pending',
        transaction: null,
        error: null,
        createdAt: expect.stringMatching(ISO_MS),
        updatedAt: expect.stringMatching(ISO_MS),
      });
      expect(Object.keys(listed ?? {}).sort()).toEqual(
        [
          'amount',
          'asset',
          'createdAt',
          'dataVersion',
          'error',
          'id',
          'network',
          'nonce',
          'operation',
          'payer',
          'paymentId',
          'payloadHash',
          'resource',
          'status',
          'transaction',
          'updatedAt',
          'validUntil',
        ].sort(),
      );
      const created = Date.parse(listed?.createdAt ?? '');
      expect(created).toBeGreaterThanOrEqual(before - 1_000);
      expect(created).toBeLessThanOrEqual(Date.now() + 1_000);
      expect(listed?.updatedAt).toBe(listed?.createdAt);
      // Found through this and another instance; the amount stays an exact string.
      expect(await store.findPayment(p.network, p.nonce)).toEqual(listed);
      expect(await other.findPayment(p.network, p.nonce)).toEqual(listed);
      expect(listed?.amount).toBe('123456789012345678901234567890');
    });

    it('ledger: the same network and nonce is refused while pending and after settled, on any instance', async () => {
      const p = newPayment();
      expect(await store.recordPayment(p)).toBe(true);
      expect(await store.recordPayment({ ...p, id: newId() })).toBe(false);
      expect(await other.recordPayment({ ...p, id: newId(), payer: '0xsomeoneelse' })).toBe(false);
      await store.finishPayment(p.id, { status: 'settled', transaction: '0xabc' });
      expect(await store.recordPayment({ ...p, id: newId() })).toBe(false);
      expect(await other.recordPayment({ ...p, id: newId() })).toBe(false);
      // Only the first row exists for this nonce.
      const mine = (await store.listPayments()).filter((r) => r.nonce === p.nonce);
      expect(mine.map((r) => r.id)).toEqual([p.id]);
      expect(mine[0]).toMatchObject({ status: 'settled', transaction: '0xabc' });
      // The same nonce on another network is another payment.
      expect(await store.recordPayment({ ...p, id: newId(), network: `${p.network}-other` })).toBe(true);
    });

    it('ledger: after a failed outcome the same network and nonce can be recorded again', async () => {
      const p = newPayment();
      expect(await store.recordPayment(p)).toBe(true);
      await store.finishPayment(p.id, { status: 'failed', error: 'insufficient_funds' });
      expect(await store.findPayment(p.network, p.nonce)).toBeNull();
      const retry = { ...p, id: newId() };
      expect(await other.recordPayment(retry)).toBe(true);
      expect((await store.findPayment(p.network, p.nonce))?.id).toBe(retry.id);
      // ...but only once more while that retry is pending or settled.
      expect(await store.recordPayment({ ...p, id: newId() })).toBe(false);
      await store.finishPayment(retry.id, { status: 'settled', transaction: '0xretry' });
      expect(await store.recordPayment({ ...p, id: newId() })).toBe(false);
      const mine = (await store.listPayments()).filter((r) => r.nonce === p.nonce);
      expect(mine.map((r) => [r.id, r.status]).sort()).toEqual(
        [
          [p.id, 'failed'],
          [retry.id, 'settled'],
        ].sort(),
      );
    });

    it('ledger: finishPayment writes the settled transaction or the failure reason', async () => {
      const settled = newPayment();
      const failed = newPayment();
      await store.recordPayment(settled);
      await store.recordPayment(failed);
      const [pendingSettled] = (await store.listPayments()).filter((r) => r.id === settled.id);
      await sleep(5);
      await other.finishPayment(settled.id, { status: 'settled', transaction: '0xfeed' });
      await other.finishPayment(failed.id, { status: 'failed', error: 'facilitator said no' });
      const rows = (await store.listPayments()).filter((r) => r.id === settled.id || r.id === failed.id);
      const s = rows.find((r) => r.id === settled.id);
      const f = rows.find((r) => r.id === failed.id);
      expect(s).toEqual({
        ...settled,
        status: 'settled',
        transaction: '0xfeed',
        error: null,
        createdAt: pendingSettled?.createdAt,
        updatedAt: expect.stringMatching(ISO_MS),
      });
      expect(Date.parse(s?.updatedAt ?? '')).toBeGreaterThan(Date.parse(s?.createdAt ?? ''));
      expect(f).toEqual({
        ...failed,
        status: 'failed',
        transaction: null,
        error: 'facilitator said no',
        createdAt: expect.stringMatching(ISO_MS),
        updatedAt: expect.stringMatching(ISO_MS),
      });
      expect(await store.findPayment(settled.network, settled.nonce)).toEqual(s);
      // An unknown id changes nothing and does not throw.
      expect(await store.finishPayment(newId(), { status: 'settled', transaction: '0xnone' })).toBe(false);
      expect(await store.findPayment(settled.network, settled.nonce)).toEqual(s);
      // An outcome moves a pending row only: a late answer never overwrites what is already known.
      expect(await other.finishPayment(settled.id, { status: 'failed', error: 'late' })).toBe(false);
      expect(await store.findPayment(settled.network, settled.nonce)).toEqual(s);
    });

    it('ledger: a failed row is taken back as settled only from failed, and not over another use of its nonce', async () => {
      const p = newPayment();
      await store.recordPayment(p);
      await store.finishPayment(p.id, { status: 'failed', error: 'facilitator unreachable' });
      expect(await other.finishPayment(p.id, { status: 'settled', transaction: '0xlate' }, 'failed')).toBe(
        true,
      );
      expect(await store.findPayment(p.network, p.nonce)).toMatchObject({ id: p.id, status: 'settled' });
      // Another row already holds the nonce: the failed one stays failed.
      const q = newPayment();
      await store.recordPayment(q);
      await store.finishPayment(q.id, { status: 'failed', error: 'timeout' });
      const holder = { ...q, id: newId() };
      expect(await store.recordPayment(holder)).toBe(true);
      expect(await store.finishPayment(q.id, { status: 'settled', transaction: '0x1' }, 'failed')).toBe(
        false,
      );
      expect((await store.findPayment(q.network, q.nonce))?.id).toBe(holder.id);
    });

    it('ledger: listPayments is newest first and filters by status and since', async () => {
      const ps = [newPayment(), newPayment(), newPayment(), newPayment()];
      for (const p of ps) {
        await store.recordPayment(p);
        await sleep(5); // distinct created_at (SQLite stores milliseconds)
      }
      await store.finishPayment(ps[0]!.id, { status: 'settled', transaction: '0x0' });
      await store.finishPayment(ps[1]!.id, { status: 'failed', error: 'e1' });
      await store.finishPayment(ps[3]!.id, { status: 'settled', transaction: '0x3' });
      const ids = new Set(ps.map((p) => p.id));
      const mine = (rows: { id: string }[]) => rows.filter((r) => ids.has(r.id)).map((r) => r.id);
      const all = await other.listPayments();
      expect(mine(all)).toEqual([ps[3]!.id, ps[2]!.id, ps[1]!.id, ps[0]!.id]);
      // Newest first over the whole list, not only these rows.
      const times = all.map((r) => Date.parse(r.createdAt));
      expect(times).toEqual([...times].sort((a, b) => b - a));
      expect(mine(await store.listPayments({ status: 'settled' }))).toEqual([ps[3]!.id, ps[0]!.id]);
      expect(mine(await store.listPayments({ status: 'failed' }))).toEqual([ps[1]!.id]);
      expect(mine(await store.listPayments({ status: 'pending' }))).toEqual([ps[2]!.id]);
      for (const status of ['pending', 'settled', 'failed'] as const) {
        expect((await store.listPayments({ status })).every((r) => r.status === status)).toBe(true);
      }
      const since = all.find((r) => r.id === ps[1]!.id)!.createdAt;
      expect(mine(await store.listPayments({ since }))).toEqual([ps[3]!.id, ps[2]!.id, ps[1]!.id]);
      expect(
        (await store.listPayments({ since })).every((r) => Date.parse(r.createdAt) >= Date.parse(since)),
      ).toBe(true);
      expect(mine(await store.listPayments({ since, status: 'settled' }))).toEqual([ps[3]!.id]);
      expect(mine(await store.listPayments({ since, status: 'failed' }))).toEqual([ps[1]!.id]);
      const future = new Date(Date.now() + 3_600_000).toISOString();
      expect(await store.listPayments({ since: future })).toEqual([]);
    });

    it('ledger: findPayment ignores failed rows and unknown nonces', async () => {
      const p = newPayment();
      expect(await store.findPayment(p.network, p.nonce)).toBeNull();
      await store.recordPayment(p);
      await store.finishPayment(p.id, { status: 'failed', error: 'expired' });
      expect(await store.findPayment(p.network, p.nonce)).toBeNull();
      expect(await other.findPayment(p.network, p.nonce)).toBeNull();
      // The failed row is still in the ledger.
      expect((await store.listPayments({ status: 'failed' })).map((r) => r.id)).toContain(p.id);
      expect(await store.findPayment(`${p.network}-other`, p.nonce)).toBeNull();
    });

    it('ledger: a payment identifier is found on any instance, held by one payment at a time, and freed by a failure', async () => {
      const id = newId();
      const p = { ...newPayment(), paymentId: id };
      expect(await store.findPaymentById(id)).toBeNull();
      expect(await store.recordPayment(p)).toBe(true);
      expect((await other.findPaymentById(id))?.id).toBe(p.id);
      expect((await other.findPaymentById(id))?.paymentId).toBe(id);
      // Another payment (another nonce) cannot take the same identifier while this one stands.
      expect(await other.recordPayment({ ...newPayment(), paymentId: id })).toBe(false);
      await store.finishPayment(p.id, { status: 'failed', error: 'expired' });
      expect(await store.findPaymentById(id)).toBeNull();
      expect(await other.recordPayment({ ...newPayment(), paymentId: id })).toBe(true);
      const rows = await db.rows('SELECT version, name FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => Number(r.version))).toContain(5);
    });

    it('ledger: concurrent records of one network and nonce from two instances: exactly one wins', async () => {
      for (let round = 0; round < 10; round++) {
        const p = newPayment();
        const attempts = Array.from({ length: 6 }, (_, i) => ({ ...p, id: newId(), payer: `payer-${i}` }));
        const results = await Promise.all(attempts.map((a, i) => (i % 2 ? other : store).recordPayment(a)));
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = attempts[results.indexOf(true)]!;
        expect((await store.findPayment(p.network, p.nonce))?.id).toBe(winner.id);
        expect((await other.listPayments()).filter((r) => r.nonce === p.nonce)).toHaveLength(1);
      }
    });

    describe('webhooks outbox', () => {
      const subscription = async (accountId: string, limit = 10) =>
        (await store.createWebhookSubscription(
          {
            accountId,
            url: 'https://hooks.example.org/ri',
            subjects: ['element/Fe', 'topic/T10074'],
            minMove: 2.5,
            secret: `whsec_${randomBytes(32).toString('base64')}`,
            createdVersion: '0123456789abcdef',
          },
          limit,
        ))!;
      const event = (subscriptionId: string, n: number) => ({
        id: `msg_${randomBytes(8).toString('hex')}_${n}`,
        subscriptionId,
        dataVersion: 'fedcba9876543210',
        body: JSON.stringify({ n }),
      });
      const past = () => new Date(Date.now() - 1000).toISOString();
      const leaseEnd = () => new Date(Date.now() + 60_000).toISOString();

      it('keeps subscriptions to the limit asked, lists them without their secret', async () => {
        const account = await store.createAccount({ email: uniqueEmail('hooks'), plan: 'personal' });
        const a = await subscription(account.id, 2);
        await subscription(account.id, 2);
        expect(await subscription(account.id, 2)).toBeNull();
        expect(a).toMatchObject({ plan: 'personal', subjects: ['element/Fe', 'topic/T10074'], minMove: 2.5 });
        expect(a.createdAt).toMatch(ISO_MS);
        const listed = await other.listWebhookSubscriptions(account.id);
        expect(listed.map((s) => s.id)).toHaveLength(2);
        expect(JSON.stringify(listed)).not.toContain('whsec_');
        expect((await other.webhookTarget(a.id, account.id))?.secret).toMatch(/^whsec_/);
        expect(await other.webhookTarget(a.id, 'someone-else')).toBeNull();
      });

      it('keeps an event once however many instances add it, and gives it to one claimer at a time', async () => {
        const account = await store.createAccount({ email: uniqueEmail('outbox'), plan: 'professional' });
        const sub = await subscription(account.id);
        const events = Array.from({ length: 30 }, (_, i) => event(sub.id, i));
        const added = await Promise.all([
          store.enqueueWebhookEvents(events, past()),
          other.enqueueWebhookEvents(events, past()),
          store.enqueueWebhookEvents(events.slice(0, 10), past()),
        ]);
        expect(added.reduce((a, b) => a + b, 0)).toBe(30);
        // Two instances claiming at once, over and over: every event is claimed by exactly one.
        const claimed: string[] = [];
        for (let round = 0; round < 10; round++) {
          const got = await Promise.all(
            [store, other, store, other].map((s) =>
              s.claimWebhookEvents(4, new Date().toISOString(), leaseEnd()),
            ),
          );
          for (const list of got)
            claimed.push(...list.filter((e) => e.subscriptionId === sub.id).map((e) => e.id));
        }
        expect(claimed.sort()).toEqual(events.map((e) => e.id).sort());
        // Leased: not claimed again before the lease ends, nor after a delivery.
        expect(
          (await other.claimWebhookEvents(100, new Date().toISOString(), leaseEnd())).filter(
            (e) => e.subscriptionId === sub.id,
          ),
        ).toEqual([]);
      });

      it('records attempts: a retry is due again with its attempt counted, a delivery and a failure never', async () => {
        const account = await store.createAccount({ email: uniqueEmail('attempts'), plan: 'professional' });
        const sub = await subscription(account.id);
        const [retried, delivered, failed] = [event(sub.id, 1), event(sub.id, 2), event(sub.id, 3)];
        await store.enqueueWebhookEvents([retried!, delivered!, failed!], past());
        const mine = async () =>
          (await store.claimWebhookEvents(100, new Date().toISOString(), leaseEnd())).filter(
            (e) => e.subscriptionId === sub.id,
          );
        const first = await mine();
        expect(first.map((e) => [e.id, e.attempts])).toEqual(
          expect.arrayContaining([
            [retried!.id, 1],
            [delivered!.id, 1],
            [failed!.id, 1],
          ]),
        );
        expect(first.find((e) => e.id === retried!.id)).toMatchObject({
          url: 'https://hooks.example.org/ri',
          body: retried!.body,
        });
        const at = new Date().toISOString();
        await other.recordWebhookAttempt({
          eventId: retried!.id,
          subscriptionId: sub.id,
          at,
          outcome: 'retrying',
          status: 500,
          error: 'HTTP 500',
          nextAttemptAt: past(),
        });
        await other.recordWebhookAttempt({
          eventId: delivered!.id,
          subscriptionId: sub.id,
          at,
          outcome: 'delivered',
          status: 204,
          error: null,
        });
        await other.recordWebhookAttempt({
          eventId: failed!.id,
          subscriptionId: sub.id,
          at,
          outcome: 'failed',
          status: null,
          error: 'no answer within 5000 ms',
        });
        const again = await mine();
        expect(again.map((e) => [e.id, e.attempts])).toEqual([[retried!.id, 2]]);
        const log = await store.webhookAttempts(account.id, 10);
        expect(log).toHaveLength(3);
        expect(log.find((a) => a.eventId === retried!.id)).toMatchObject({
          outcome: 'retrying',
          status: 500,
          error: 'HTTP 500',
          url: 'https://hooks.example.org/ri',
        });
        expect(log[0]!.at).toMatch(ISO_MS);
      });

      it('deleting a subscription deletes its events and log; nothing is recorded for it afterwards', async () => {
        const account = await store.createAccount({ email: uniqueEmail('deleted'), plan: 'professional' });
        const sub = await subscription(account.id);
        const e = event(sub.id, 1);
        await store.enqueueWebhookEvents([e], past());
        await store.recordWebhookAttempt({
          eventId: 'msg_test_1',
          subscriptionId: sub.id,
          at: new Date().toISOString(),
          outcome: 'delivered',
          status: 200,
          error: null,
        });
        expect(await other.deleteWebhookSubscription(sub.id, 'someone-else')).toBe(false);
        expect(await other.deleteWebhookSubscription(sub.id, account.id)).toBe(true);
        expect(await other.deleteWebhookSubscription(sub.id)).toBe(false);
        expect(await db.rows(`SELECT id FROM webhook_outbox WHERE subscription_id = '${sub.id}'`)).toEqual(
          [],
        );
        await store.recordWebhookAttempt({
          eventId: e.id,
          subscriptionId: sub.id,
          at: new Date().toISOString(),
          outcome: 'delivered',
          status: 200,
          error: null,
        });
        expect(await store.webhookAttempts(account.id, 10)).toEqual([]);
        expect(await store.enqueueWebhookEvents([event(sub.id, 2)], past())).toBe(0);
      });

      it('prunes finished events and attempts past the retention, not pending ones nor kept versions', async () => {
        const account = await store.createAccount({ email: uniqueEmail('pruned'), plan: 'professional' });
        const sub = await subscription(account.id);
        const day = 86_400_000;
        const daysAgo = (n: number) => new Date(Date.now() - n * day).toISOString();
        const kept = { ...event(sub.id, 0), dataVersion: 'aaaaaaaaaaaaaaaa' };
        const [oldDelivered, oldFailed, oldPending, newDelivered] = [1, 2, 3, 4].map((n) => event(sub.id, n));
        await store.enqueueWebhookEvents([oldDelivered!, oldFailed!, oldPending!, kept], daysAgo(40));
        await store.enqueueWebhookEvents([newDelivered!], daysAgo(2));
        const record = (e: { id: string }, outcome: 'delivered' | 'failed' | 'retrying', at: string) =>
          other.recordWebhookAttempt({
            eventId: e.id,
            subscriptionId: sub.id,
            at,
            outcome,
            status: outcome === 'delivered' ? 200 : 500,
            error: outcome === 'delivered' ? null : 'HTTP 500',
            ...(outcome === 'retrying' ? { nextAttemptAt: new Date(Date.now() + day).toISOString() } : {}),
          });
        await record(oldDelivered!, 'delivered', daysAgo(40));
        await record(oldFailed!, 'failed', daysAgo(39));
        await record(kept, 'delivered', daysAgo(40));
        await record(oldPending!, 'retrying', daysAgo(1));
        await record(newDelivered!, 'delivered', daysAgo(2));
        const logBefore = (await store.webhookAttempts(account.id, 20)).filter((a) => a.at > daysAgo(30));

        // Two instances at once (two replicas): each row deleted once, neither waits nor fails.
        const pruned = await Promise.all(
          [store, other].map((s) => s.pruneWebhookOutbox(daysAgo(30), ['aaaaaaaaaaaaaaaa'], 1000)),
        );
        expect(pruned.reduce((a, b) => a + b.events, 0)).toBe(2);
        expect(pruned.reduce((a, b) => a + b.attempts, 0)).toBe(3);
        const left = await db.rows(
          `SELECT id, status FROM webhook_outbox WHERE subscription_id = '${sub.id}' ORDER BY id`,
        );
        expect(left.map((r) => r.id).sort()).toEqual([kept.id, oldPending!.id, newDelivered!.id].sort());
        expect(left.find((r) => r.id === oldPending!.id)?.status).toBe('pending');
        // The delivery log shows what it showed within the retention.
        expect(await store.webhookAttempts(account.id, 20)).toEqual(logBefore);
        expect(logBefore.map((a) => a.eventId).sort()).toEqual([oldPending!.id, newDelivered!.id].sort());
        // A pruned event made again is new to the outbox; a kept one is not.
        expect(await store.enqueueWebhookEvents([oldDelivered!, kept], past())).toBe(1);
        expect(await store.pruneWebhookOutbox(daysAgo(30), ['aaaaaaaaaaaaaaaa'], 1000)).toEqual({
          events: 0,
          attempts: 0,
        });
      });

      it('prunes in batches of the size asked', async () => {
        const account = await store.createAccount({ email: uniqueEmail('batches'), plan: 'professional' });
        const sub = await subscription(account.id);
        const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
        const events = [1, 2, 3].map((n) => event(sub.id, n));
        await store.enqueueWebhookEvents(events, old);
        for (const e of events)
          await store.recordWebhookAttempt({
            eventId: e.id,
            subscriptionId: sub.id,
            at: old,
            outcome: 'delivered',
            status: 204,
            error: null,
          });
        const before = new Date(Date.now() - 30 * 86_400_000).toISOString();
        expect(await other.pruneWebhookOutbox(before, ['aaaaaaaaaaaaaaaa'], 2)).toEqual({
          events: 2,
          attempts: 2,
        });
        expect(await other.pruneWebhookOutbox(before, ['aaaaaaaaaaaaaaaa'], 2)).toEqual({
          events: 1,
          attempts: 1,
        });
        expect(await db.rows(`SELECT id FROM webhook_outbox WHERE subscription_id = '${sub.id}'`)).toEqual(
          [],
        );
      });
    });
  });
}

stateStoreSuite(sqliteBackend);
stateStoreSuite(postgresBackend);

describe('state store: SQLite written by another process', () => {
  it('refuses a key revoked, and sees a plan changed, by another connection (as `ri keys revoke` writes) a millisecond later', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ri-state-'));
    const path = join(dir, 'state.sqlite');
    const store = new SqliteStateStore(path);
    await store.migrate();
    const writer = new Database(path);
    const settle = () => new Promise((ok) => setTimeout(ok, 5));
    try {
      const account = await store.createAccount({ email: uniqueEmail('elsewhere'), plan: 'free' });
      const { key, prefix } = await store.createKey(account.id);
      expect((await store.authenticate(key))?.plan).toBe('free');
      writer.prepare('UPDATE accounts SET plan = ? WHERE id = ?').run('personal', account.id);
      await settle();
      expect((await store.authenticate(key))?.plan).toBe('personal');
      writer
        .prepare('UPDATE api_keys SET revoked_at = ? WHERE prefix = ?')
        .run(new Date().toISOString(), prefix);
      await settle();
      expect(await store.authenticate(key)).toBeNull();
    } finally {
      writer.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('state store: SQLite statements', () => {
  it('prepares each statement once: saving and finding quotes again prepares nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ri-state-'));
    const store = new SqliteStateStore(join(dir, 'state.sqlite'));
    await store.migrate();
    const quote = (id: string) => ({
      id,
      body: JSON.stringify({ quote_id: id }),
      expiresAt: new Date(Date.now() + 60_000).toISOString(),
    });
    const prepare = vi.spyOn(Database.prototype, 'prepare');
    try {
      await store.saveQuote(quote('q1'));
      expect(await store.findQuote('q1')).toBe(JSON.stringify({ quote_id: 'q1' }));
      expect(prepare).toHaveBeenCalled();
      prepare.mockClear();
      await store.saveQuote(quote('q2'));
      expect(await store.findQuote('q2')).toBe(JSON.stringify({ quote_id: 'q2' }));
      expect(await store.findQuote('q1')).toBe(JSON.stringify({ quote_id: 'q1' }));
      expect(prepare).not.toHaveBeenCalled();
    } finally {
      prepare.mockRestore();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('API keys', () => {
  it('have the format ri_<8 [a-z0-9]>_<43 base64url> and 256-bit secrets', () => {
    const keys = Array.from({ length: 500 }, () => generateApiKey());
    const prefixes = new Set<string>();
    const secrets = new Set<string>();
    const bitsSeen = { ones: new Array<number>(256).fill(0) };
    for (const { key, prefix, hash } of keys) {
      expect(key).toMatch(/^ri_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
      expect(key.startsWith(`ri_${prefix}_`)).toBe(true);
      expect(parseApiKey(key)).toEqual({ prefix });
      expect(hash).toBe(hashApiKey(key));
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(hash).not.toContain(key);
      const secret = Buffer.from(key.split('_').slice(2).join('_'), 'base64url');
      expect(secret.length).toBe(32);
      for (let bit = 0; bit < 256; bit++) {
        if ((secret[bit >> 3]! >> (bit & 7)) & 1) bitsSeen.ones[bit]!++;
      }
      prefixes.add(prefix);
      secrets.add(secret.toString('hex'));
    }
    expect(secrets.size).toBe(500);
    expect(prefixes.size).toBeGreaterThan(495);
    // Every one of the 256 bits varies (a constant or truncated secret would fail this).
    for (const ones of bitsSeen.ones) {
      expect(ones).toBeGreaterThan(150);
      expect(ones).toBeLessThan(350);
    }
  });

  it('compares hashes in constant time and without throwing on bad input', () => {
    const h = hashApiKey('ri_abcdefgh_x');
    expect(hashesEqual(h, h)).toBe(true);
    expect(hashesEqual(h, hashApiKey('ri_abcdefgh_y'))).toBe(false);
    expect(hashesEqual(h, h.slice(2))).toBe(false);
    expect(hashesEqual(h, 'zz')).toBe(false);
  });
});

describe('plans', () => {
  it('parses case-insensitively and refuses unknown plans clearly', () => {
    expect(PLANS).toEqual(['free', 'personal', 'professional', 'enterprise']);
    expect(parsePlan('Personal')).toBe('personal');
    expect(parsePlan(' ENTERPRISE ')).toBe('enterprise');
    expect(() => parsePlan('gold')).toThrow(UnknownPlanError);
    expect(() => parsePlan('gold')).toThrow(/unknown plan 'gold'.*free, personal, professional, enterprise/);
    expect(() => parsePlan('')).toThrow(UnknownPlanError);
  });
});

describe('openStateStore', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'ri-open-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('defaults to DATA_DIR/state.sqlite, migrated', async () => {
    const dataDir = join(tempDir(), 'nested', 'data');
    const store = await openStateStore(undefined, dataDir);
    try {
      expect(store).toBeInstanceOf(SqliteStateStore);
      expect(existsSync(join(dataDir, 'state.sqlite'))).toBe(true);
      const account = await store.createAccount({ email: null, plan: 'free' });
      expect((await store.authenticate((await store.createKey(account.id)).key))?.plan).toBe('free');
    } finally {
      await store.close();
    }
  });

  it('opens sqlite:PATH', async () => {
    const path = join(tempDir(), 'elsewhere', 'my.sqlite');
    const store = await openStateStore(`sqlite:${path}`, '/nonexistent-data-dir');
    await store.close();
    expect(existsSync(path)).toBe(true);
  });

  it('opens postgres:// and postgresql:// URLs, with an optional schema parameter', async () => {
    const schema = `ri_test_${randomBytes(6).toString('hex')}`;
    const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
    const a = await openStateStore(url, tempDir());
    const b = await openStateStore(url.replace(/^postgres:/, 'postgresql:'), tempDir());
    try {
      expect(a).toBeInstanceOf(PostgresStateStore);
      const account = await a.createAccount({ email: null, plan: 'personal' });
      const { key } = await a.createKey(account.id);
      expect((await b.authenticate(key))?.plan).toBe('personal');
    } finally {
      await a.close();
      await b.close();
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  });

  it('refuses other URLs and bad schema names', async () => {
    await expect(openStateStore('mysql://x', tempDir())).rejects.toBeInstanceOf(StateUrlError);
    await expect(openStateStore('sqlite:', tempDir())).rejects.toBeInstanceOf(StateUrlError);
    await expect(openStateStore(`${PG_URL}?schema=Bad;Name`, tempDir())).rejects.toThrow(
      /invalid schema name/,
    );
  });
});

/**
 * The embedded state store: one SQLite file (WAL, so readers do not wait for the writer; a busy
 * timeout, so a second process, e.g. `ri keys create` beside a running server, waits rather than fails).
 * better-sqlite3 is synchronous; the methods are async only to share the StateStore interface.
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, closeSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { hashApiKey, hashesEqual, parseApiKey } from './api-keys.js';
import { AsideWrites } from './aside-writes.js';
import { hashFeedToken, parseFeedToken } from './feed-tokens.js';
import {
  type NewPayment,
  type PaymentDbRow,
  type PaymentOutcome,
  type PaymentRow,
  type PaymentStatus,
  toPaymentRow,
} from './payment-ledger.js';
import { type Plan, parsePlan } from './plans.js';
import type { StateLog } from './state-deadline.js';
import { migrationsTableSql, pendingMigrations } from './state-migrations.js';
import {
  ACCOUNT_COLUMNS,
  type AccountRow,
  createFeedTokenRetrying,
  createKeyRetrying,
  FEED_TOKEN_COLUMNS,
  type FeedTokenRow,
  KEY_COLUMNS,
  type KeyRow,
  paymentValues,
  SESSION_COLUMNS,
  type SessionRow,
  toAccount,
  toFeedTokenInfo,
  toKeyInfo,
  toSession,
} from './state-rows.js';
import {
  type Account,
  AccountExistsError,
  type FeedTokenInfo,
  type KeyInfo,
  type NewSession,
  normaliseEmail,
  QUOTE_RETENTION_MS,
  StateNotFoundError,
  type StateStore,
  type StoredQuote,
  type WebSession,
} from './state-store.js';
import {
  type AttemptRow,
  type ClaimedRow,
  type ClaimedWebhookEvent,
  type NewWebhookEvent,
  type NewWebhookSubscription,
  newSubscriptionId,
  outboxStatus,
  SUBSCRIPTION_COLUMNS,
  type SubscriptionRow,
  toAttempt,
  toClaimed,
  toSubscription,
  type WebhookAttempt,
  type WebhookSubscription,
} from './webhook-outbox.js';

/** last_used_at is written at most this often per key, so authentication is a read. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * SQLite's data_version is read at most once per this many milliseconds: reading it was a tenth of
 * a keyed cached answer's CPU time. So a key revoked (or a plan changed) by another process, e.g.
 * `ri keys revoke`, is refused at most about this much later; writes through any store in this
 * process are seen at once (localWrites).
 */
const DATA_VERSION_RECHECK_MS = 1;

/**
 * Writes that change authentication made through any SqliteStateStore of this process: another
 * instance on the same file sees them at once, without waiting for the data_version recheck.
 */
let localWrites = 0;

/** A known, unrevoked key's row, with last_used_at as a number for the per-request check. */
interface Verified {
  row: KeyRow;
  lastUsedMs: number;
}

export class SqliteStateStore implements StateStore {
  private readonly db: Database.Database;
  /**
   * Statements by their SQL, prepared once: preparing took longer than running most of them (a
   * lab quote's save prepared two on the event loop for every quote).
   */
  private readonly statements = new Map<string, Database.Statement>();

  private prepared(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** last_used_at is written aside the answer: a full disk must not refuse a valid key. */
  private readonly aside: AsideWrites;

  constructor(
    readonly path: string,
    options: { log?: StateLog } = {},
  ) {
    this.aside = new AsideWrites(options.log);
    ownerOnly(path);
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('synchronous = NORMAL');
  }

  async migrate(): Promise<void> {
    const apply = this.db.transaction(() => {
      this.db.exec(migrationsTableSql('sqlite'));
      const applied = this.prepared('SELECT version FROM schema_migrations').pluck().all() as number[];
      const record = this.prepared(
        'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)',
      );
      for (const m of pendingMigrations('sqlite', applied)) {
        this.db.exec(m.sql);
        record.run(m.version, m.name, now());
      }
    });
    // IMMEDIATE takes the write lock first, so two processes migrating at once run one after the other.
    apply.immediate();
  }

  async createAccount(input: { email: string | null; plan: Plan }): Promise<Account> {
    this.forgetLookups();
    const account: Account = {
      id: randomUUID(),
      email: input.email === null ? null : normaliseEmail(input.email),
      plan: parsePlan(input.plan),
      createdAt: now(),
    };
    try {
      this.prepared('INSERT INTO accounts (id, email, plan, created_at) VALUES (?, ?, ?, ?)').run(
        account.id,
        account.email,
        account.plan,
        account.createdAt,
      );
    } catch (error) {
      if (isUniqueViolation(error) && account.email !== null) throw new AccountExistsError(account.email);
      throw error;
    }
    return account;
  }

  async findAccountByEmail(email: string): Promise<Account | null> {
    const row = this.prepared(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = ?`).get(
      normaliseEmail(email),
    ) as AccountRow | undefined;
    return row ? toAccount(row) : null;
  }

  async setPlan(email: string, plan: Plan): Promise<Account> {
    this.forgetLookups();
    const row = this.prepared(
      `UPDATE accounts SET plan = ? WHERE email = ? RETURNING ${ACCOUNT_COLUMNS}`,
    ).get(parsePlan(plan), normaliseEmail(email)) as AccountRow | undefined;
    if (!row) throw new StateNotFoundError(`no account with email ${normaliseEmail(email)}`);
    return toAccount(row);
  }

  async createKey(accountId: string, name: string | null = null): Promise<{ key: string; prefix: string }> {
    this.forgetLookups();
    const exists = this.prepared('SELECT 1 FROM accounts WHERE id = ?').get(accountId);
    if (!exists) throw new StateNotFoundError(`no account with id ${accountId}`);
    const insert = this.prepared(
      'INSERT INTO api_keys (prefix, key_hash, account_id, created_at, name) VALUES (?, ?, ?, ?, ?)',
    );
    return createKeyRetrying(
      (prefix, hash) => insert.run(prefix, hash, accountId, now(), name),
      isUniqueViolation,
    );
  }

  /**
   * What authenticate() found for each key presented, by the SHA-256 of the key (never the key
   * itself, so no secret sits in a long-lived structure), valid while no other connection has
   * committed: SQLite's data_version changes on every commit by another process (a `ri keys
   * revoke`, another replica) and is read at most once per DATA_VERSION_RECHECK_MS, and writes
   * through any store of this process clear the map (localWrites), so a revoked key is refused at
   * once here and within about a millisecond when revoked elsewhere. A repeated key then costs a
   * hash and a map lookup, no query. Only well-formed keys get here. Bounded: past 10,000 keys the
   * map starts afresh.
   */
  private readonly lookups = new Map<string, Verified | null>();
  private lookupsVersion: unknown = null;
  private lookupsLocalWrites = localWrites;
  /** performance.now() until which lookupsVersion is taken as current without reading it again. */
  private versionFreshUntil = -Infinity;

  /** Called by every write that changes what authenticate() answers. */
  private forgetLookups(): void {
    this.lookups.clear();
    localWrites++;
  }

  /**
   * What authenticate() would answer when it can answer without writing: a key looked up before
   * and used recently (its last_used_at need not be written), once the lookups are known to be
   * current (the data version, read here when it is due, a pragma and no query). Otherwise
   * undefined, and the caller asks authenticate(). Synchronous: a repeated keyed call costs no
   * promise and no deadline timer, also in the call that reads the data version.
   */
  knownKey(key: string): KeyInfo | undefined {
    const parsed = parseApiKey(key);
    if (!parsed) return undefined;
    try {
      this.currentLookups();
    } catch {
      return undefined; // The file did not answer: authenticate() reports it, within its deadline.
    }
    const found = this.lookups.get(hashApiKey(key));
    if (!found || found.lastUsedMs < Date.now() - LAST_USED_RESOLUTION_MS) return undefined;
    return toKeyInfo(found.row);
  }

  async authenticate(key: string): Promise<KeyInfo | null> {
    const parsed = parseApiKey(key);
    if (!parsed) return null;
    this.currentLookups();
    const keyHash = hashApiKey(key);
    let found = this.lookups.get(keyHash);
    if (found === undefined) {
      found = this.verify(keyHash, parsed.prefix);
      if (this.lookups.size >= 10_000) this.lookups.clear();
      this.lookups.set(keyHash, found);
    }
    if (!found) return null;
    const usedAt = Date.now();
    if (found.lastUsedMs < usedAt - LAST_USED_RESOLUTION_MS) {
      const stamp = new Date(usedAt).toISOString();
      const prefix = found.row.prefix;
      // Marked as written before it is: a failing write is tried again a minute later, not per call.
      found.row.last_used_at = stamp;
      found.lastUsedMs = usedAt;
      this.aside.run('last_used_at', () => {
        if (this.db.open)
          this.prepared('UPDATE api_keys SET last_used_at = ? WHERE prefix = ?').run(stamp, prefix);
      });
    }
    return toKeyInfo(found.row);
  }

  /**
   * Forgets the lookups once another connection has committed (the data version, read at most
   * once per DATA_VERSION_RECHECK_MS) or a store of this process has written.
   */
  private currentLookups(): void {
    const at = performance.now();
    if (at < this.versionFreshUntil && this.lookupsLocalWrites === localWrites) return;
    const version = this.prepared('PRAGMA data_version').pluck().get();
    if (version !== this.lookupsVersion || this.lookupsLocalWrites !== localWrites) {
      this.lookups.clear();
      this.lookupsVersion = version;
      this.lookupsLocalWrites = localWrites;
    }
    this.versionFreshUntil = at + DATA_VERSION_RECHECK_MS;
  }

  /** The key's row if the key (by its hash) is known and not revoked, else null (a query, once per key). */
  private verify(hash: string, prefix: string): Verified | null {
    // Looked up by the hash (unique index): the secret is never compared character by character.
    const row = this.prepared(
      `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_hash = ?`,
    ).get(hash) as KeyRow | undefined;
    if (!row || !hashesEqual(row.key_hash, hash) || row.prefix !== prefix) return null;
    if (row.revoked_at !== null) return null;
    return { row, lastUsedMs: row.last_used_at === null ? -Infinity : new Date(row.last_used_at).getTime() };
  }

  async listKeys(filter: { accountId?: string } = {}): Promise<KeyInfo[]> {
    const rows = this.prepared(
      `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id
          WHERE (? IS NULL OR k.account_id = ?) ORDER BY k.created_at, k.prefix`,
    ).all(filter.accountId ?? null, filter.accountId ?? null) as KeyRow[];
    return rows.map(toKeyInfo);
  }

  async revokeKey(prefix: string, accountId?: string): Promise<boolean> {
    this.forgetLookups();
    const result = this.prepared(
      'UPDATE api_keys SET revoked_at = ? WHERE prefix = ? AND revoked_at IS NULL AND (? IS NULL OR account_id = ?)',
    ).run(now(), prefix, accountId ?? null, accountId ?? null);
    return result.changes > 0;
  }

  async createFeedToken(accountId: string): Promise<{ token: string; prefix: string }> {
    const exists = this.prepared('SELECT 1 FROM accounts WHERE id = ?').get(accountId);
    if (!exists) throw new StateNotFoundError(`no account with id ${accountId}`);
    const insert = this.prepared(
      'INSERT INTO feed_tokens (prefix, token_hash, account_id, created_at) VALUES (?, ?, ?, ?)',
    );
    return createFeedTokenRetrying(
      (prefix, hash) => insert.run(prefix, hash, accountId, now()),
      isUniqueViolation,
    );
  }

  // Not kept in memory as keys are (lookups): a feed reader asks a few times an hour, so a
  // query per call costs nothing and a revocation needs no cache to reach.
  async authenticateFeedToken(token: string): Promise<FeedTokenInfo | null> {
    const parsed = parseFeedToken(token);
    if (!parsed) return null;
    const hash = hashFeedToken(token);
    const row = this.prepared(
      `SELECT ${FEED_TOKEN_COLUMNS} FROM feed_tokens f JOIN accounts a ON a.id = f.account_id WHERE f.token_hash = ?`,
    ).get(hash) as FeedTokenRow | undefined;
    if (!row || !hashesEqual(row.token_hash, hash) || row.prefix !== parsed.prefix) return null;
    return row.revoked_at === null ? toFeedTokenInfo(row) : null;
  }

  async listFeedTokens(accountId?: string): Promise<FeedTokenInfo[]> {
    const rows = this.prepared(
      `SELECT ${FEED_TOKEN_COLUMNS} FROM feed_tokens f JOIN accounts a ON a.id = f.account_id
          WHERE (? IS NULL OR f.account_id = ?) ORDER BY f.created_at, f.prefix`,
    ).all(accountId ?? null, accountId ?? null) as FeedTokenRow[];
    return rows.map(toFeedTokenInfo);
  }

  async revokeFeedToken(prefix: string, accountId?: string): Promise<boolean> {
    const result = this.prepared(
      'UPDATE feed_tokens SET revoked_at = ? WHERE prefix = ? AND revoked_at IS NULL AND (? IS NULL OR account_id = ?)',
    ).run(now(), prefix, accountId ?? null, accountId ?? null);
    return result.changes > 0;
  }

  async addUsage(month: string, calls: ReadonlyMap<string, number>): Promise<void> {
    const add = this.prepared(
      `INSERT INTO key_usage (prefix, month, calls) SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM api_keys WHERE prefix = ?)
       ON CONFLICT (prefix, month) DO UPDATE SET calls = calls + excluded.calls`,
    );
    this.db.transaction(() => {
      for (const [prefix, n] of calls) add.run(prefix, month, n, prefix);
    })();
  }

  async usage(accountId: string, month: string): Promise<Map<string, number>> {
    const rows = this.prepared(
      `SELECT u.prefix, u.calls FROM key_usage u JOIN api_keys k ON k.prefix = u.prefix
          WHERE k.account_id = ? AND u.month = ?`,
    ).all(accountId, month) as { prefix: string; calls: number }[];
    return new Map(rows.map((r) => [r.prefix, r.calls]));
  }

  async saveSignInToken(tokenHash: string, email: string, expiresAt: string): Promise<void> {
    this.db.transaction(() => {
      this.prepared('DELETE FROM sign_in_tokens WHERE expires_at < ?').run(now());
      this.prepared('INSERT INTO sign_in_tokens (token_hash, email, expires_at) VALUES (?, ?, ?)').run(
        tokenHash,
        normaliseEmail(email),
        expiresAt,
      );
    })();
  }

  async takeSignInToken(tokenHash: string): Promise<string | null> {
    // DELETE ... RETURNING: the one statement that reads and uses up the token.
    const row = this.prepared(
      'DELETE FROM sign_in_tokens WHERE token_hash = ? RETURNING email, expires_at',
    ).get(tokenHash) as { email: string; expires_at: string } | undefined;
    return row && row.expires_at > now() ? row.email : null;
  }

  async createSession(session: NewSession): Promise<void> {
    this.db.transaction(() => {
      this.prepared('DELETE FROM sessions WHERE expires_at < ?').run(now());
      this.prepared(
        'INSERT INTO sessions (id_hash, account_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)',
      ).run(session.idHash, session.accountId, session.csrf, now(), session.expiresAt);
    })();
  }

  async findSession(idHash: string): Promise<WebSession | null> {
    const row = this.prepared(
      `SELECT ${SESSION_COLUMNS} FROM sessions s JOIN accounts a ON a.id = s.account_id
          WHERE s.id_hash = ? AND s.expires_at > ?`,
    ).get(idHash, now()) as SessionRow | undefined;
    return row ? toSession(row) : null;
  }

  async deleteSession(idHash: string): Promise<void> {
    this.prepared('DELETE FROM sessions WHERE id_hash = ?').run(idHash);
  }

  async saveQuote(quote: StoredQuote): Promise<void> {
    const prune = new Date(Date.now() - QUOTE_RETENTION_MS).toISOString();
    this.db.transaction(() => {
      this.prepared('DELETE FROM quotes WHERE expires_at < ?').run(prune);
      this.prepared(
        'INSERT INTO quotes (id, body, expires_at) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body, expires_at = excluded.expires_at',
      ).run(quote.id, quote.body, quote.expiresAt);
    })();
  }

  async findQuote(id: string): Promise<string | null> {
    return (
      (this.prepared('SELECT body FROM quotes WHERE id = ?').pluck().get(id) as string | undefined) ?? null
    );
  }

  async secret(name: string, generate: () => string): Promise<string> {
    this.prepared('INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(
      name,
      generate(),
    );
    return this.prepared('SELECT value FROM secrets WHERE name = ?').pluck().get(name) as string;
  }

  async recordPayment(row: NewPayment): Promise<boolean> {
    const at = now();
    try {
      this.prepared(
        `INSERT INTO payments (payload_hash, valid_until, data_version, id, operation, resource, amount, network, asset, payer, nonce, payment_id, status, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
      ).run(...paymentValues(row), at, at);
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async finishPayment(
    id: string,
    outcome: PaymentOutcome,
    from: PaymentStatus = 'pending',
  ): Promise<boolean> {
    try {
      const { changes } = this.prepared(
        'UPDATE payments SET status = ?, "transaction" = ?, error = ?, updated_at = ? WHERE id = ? AND status = ?',
      ).run(
        outcome.status,
        outcome.status === 'settled' ? outcome.transaction : null,
        outcome.status === 'failed' ? outcome.error : null,
        now(),
        id,
        from,
      );
      return changes === 1;
    } catch (error) {
      // A failed row taken back as settled while another row holds its nonce: that one stands.
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async findPayment(network: string, nonce: string): Promise<PaymentRow | null> {
    const row = this.prepared(
      `SELECT * FROM payments WHERE network = ? AND nonce = ? AND status <> 'failed'`,
    ).get(network, nonce) as PaymentDbRow | undefined;
    return row ? toPaymentRow(row) : null;
  }

  async findPaymentById(paymentId: string): Promise<PaymentRow | null> {
    const row = this.prepared(`SELECT * FROM payments WHERE payment_id = ? AND status <> 'failed'`).get(
      paymentId,
    ) as PaymentDbRow | undefined;
    return row ? toPaymentRow(row) : null;
  }

  async listPayments(filter: { since?: string; status?: PaymentStatus } = {}): Promise<PaymentRow[]> {
    const rows = this.prepared(
      `SELECT * FROM payments WHERE (? IS NULL OR created_at >= ?) AND (? IS NULL OR status = ?)
         ORDER BY created_at DESC, id`,
    ).all(
      filter.since ?? null,
      filter.since ?? null,
      filter.status ?? null,
      filter.status ?? null,
    ) as PaymentDbRow[];
    return rows.map(toPaymentRow);
  }

  async createWebhookSubscription(
    input: NewWebhookSubscription,
    limit: number,
  ): Promise<WebhookSubscription | null> {
    const id = newSubscriptionId();
    const { changes } = this.prepared(
      `INSERT INTO webhook_subscriptions (id, account_id, url, subjects, min_move, secret, created_version, created_at)
         SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE (SELECT count(*) FROM webhook_subscriptions WHERE account_id = ?) < ?`,
    ).run(
      id,
      input.accountId,
      input.url,
      input.subjects.join('\n'),
      input.minMove,
      input.secret,
      input.createdVersion,
      now(),
      input.accountId,
      limit,
    );
    if (changes === 0) return null;
    return (await this.listWebhookSubscriptions(input.accountId)).find((s) => s.id === id)!;
  }

  async listWebhookSubscriptions(accountId?: string): Promise<WebhookSubscription[]> {
    const rows = this.prepared(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions s JOIN accounts a ON a.id = s.account_id
          WHERE (? IS NULL OR s.account_id = ?) ORDER BY s.created_at, s.id`,
    ).all(accountId ?? null, accountId ?? null) as SubscriptionRow[];
    return rows.map(toSubscription);
  }

  async webhookTarget(id: string, accountId?: string): Promise<{ url: string; secret: string } | null> {
    const row = this.prepared(
      'SELECT url, secret FROM webhook_subscriptions WHERE id = ? AND (? IS NULL OR account_id = ?)',
    ).get(id, accountId ?? null, accountId ?? null) as { url: string; secret: string } | undefined;
    return row ?? null;
  }

  async deleteWebhookSubscription(id: string, accountId?: string): Promise<boolean> {
    // Its events and log go with it (ON DELETE CASCADE).
    const { changes } = this.prepared(
      'DELETE FROM webhook_subscriptions WHERE id = ? AND (? IS NULL OR account_id = ?)',
    ).run(id, accountId ?? null, accountId ?? null);
    return changes > 0;
  }

  async enqueueWebhookEvents(events: readonly NewWebhookEvent[], nowIso: string): Promise<number> {
    const insert = this.prepared(
      `INSERT INTO webhook_outbox (id, subscription_id, data_version, body, status, next_attempt_at, created_at)
         SELECT ?, ?, ?, ?, 'pending', ?, ? WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE id = ?)
         ON CONFLICT (id) DO NOTHING`,
    );
    return this.db.transaction(() => {
      let added = 0;
      for (const e of events)
        added += insert.run(
          e.id,
          e.subscriptionId,
          e.dataVersion,
          e.body,
          nowIso,
          nowIso,
          e.subscriptionId,
        ).changes;
      return added;
    })();
  }

  async claimWebhookEvents(
    limit: number,
    nowIso: string,
    leaseUntilIso: string,
  ): Promise<ClaimedWebhookEvent[]> {
    const due = this.prepared(
      `SELECT o.id, o.subscription_id, o.body, o.attempts + 1 AS attempts, o.created_at, s.url, s.secret
         FROM webhook_outbox o JOIN webhook_subscriptions s ON s.id = o.subscription_id
        WHERE o.status = 'pending' AND o.next_attempt_at <= ? AND (o.lease_until IS NULL OR o.lease_until <= ?)
        ORDER BY o.next_attempt_at, o.id LIMIT ?`,
    );
    const lease = this.prepared(
      'UPDATE webhook_outbox SET lease_until = ?, attempts = attempts + 1 WHERE id = ?',
    );
    // One write transaction (IMMEDIATE): a second process on the file claims after this one.
    const claim = this.db.transaction(() => {
      const rows = due.all(nowIso, nowIso, limit) as ClaimedRow[];
      for (const r of rows) lease.run(leaseUntilIso, r.id);
      return rows;
    });
    return claim.immediate().map(toClaimed);
  }

  async recordWebhookAttempt(attempt: WebhookAttempt): Promise<void> {
    this.db.transaction(() => {
      this.prepared(
        `INSERT INTO webhook_attempts (id, subscription_id, event_id, attempted_at, outcome, response_status, error)
           SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE id = ?)`,
      ).run(
        randomUUID(),
        attempt.subscriptionId,
        attempt.eventId,
        attempt.at,
        attempt.outcome,
        attempt.status,
        attempt.error,
        attempt.subscriptionId,
      );
      this.prepared(
        'UPDATE webhook_outbox SET status = ?, next_attempt_at = coalesce(?, next_attempt_at), lease_until = NULL WHERE id = ?',
      ).run(outboxStatus(attempt), attempt.nextAttemptAt ?? null, attempt.eventId);
    })();
  }

  async webhookAttempts(accountId: string, limit: number): Promise<(WebhookAttempt & { url: string })[]> {
    const rows = this.prepared(
      `SELECT w.event_id, w.subscription_id, w.attempted_at, w.outcome, w.response_status, w.error, s.url
         FROM webhook_attempts w JOIN webhook_subscriptions s ON s.id = w.subscription_id
        WHERE s.account_id = ? ORDER BY w.attempted_at DESC, w.id LIMIT ?`,
    ).all(accountId, limit) as AttemptRow[];
    return rows.map(toAttempt);
  }

  async pruneWebhookOutbox(
    beforeIso: string,
    keepVersions: readonly string[],
    limit: number,
  ): Promise<{ events: number; attempts: number }> {
    // Batches of `limit`: each one a short write transaction, so requests are not held behind it.
    return this.db.transaction(() => ({
      events: this.prepared(
        `DELETE FROM webhook_outbox WHERE id IN (
           SELECT id FROM webhook_outbox
            WHERE status IN ('delivered', 'failed') AND created_at < ?
              AND data_version NOT IN (SELECT value FROM json_each(?)) LIMIT ?)`,
      ).run(beforeIso, JSON.stringify(keepVersions), limit).changes,
      attempts: this.prepared(
        'DELETE FROM webhook_attempts WHERE id IN (SELECT id FROM webhook_attempts WHERE attempted_at < ? LIMIT ?)',
      ).run(beforeIso, limit).changes,
    }))();
  }

  async ping(): Promise<void> {
    this.prepared('SELECT 1').get();
  }

  async close(): Promise<void> {
    await this.aside.settled();
    if (this.db.open) this.db.close();
  }

  /**
   * Copies the whole database into `file` with SQLite's online backup: a consistent copy while
   * servers keep reading and writing (a write by another process restarts the copy).
   */
  async backup(file: string): Promise<void> {
    await this.db.backup(file);
  }
}

/**
 * The state file holds key hashes, the ledger and the quote-signing secret: readable by its owner
 * only (0600), created so before SQLite opens it (its -wal and -shm take the same mode), and
 * tightened if an older release left it wider.
 */
function ownerOnly(path: string): void {
  if (path === ':memory:' || path === '') return;
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, 0o600);
    } catch {
      if (file === path) closeSync(openSync(path, 'a', 0o600));
    }
  }
}

function now(): string {
  return new Date().toISOString();
}

function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

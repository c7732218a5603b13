/**
 * The shared state store for several replicas: PostgreSQL through a pg Pool. Every statement is
 * parameterised; identifiers (the optional schema) are validated and quoted, never taken raw.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
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

export interface PostgresStateStoreOptions {
  connectionString: string;
  /**
   * Keep the tables in this schema (created by migrate() if missing): every pooled connection
   * starts with search_path set to it. Used by tests for isolated runs on one database.
   */
  schema?: string;
  /** Pool size (default 10). */
  max?: number;
  /**
   * Abandon a connection attempt, a wait for a pooled connection, or a query after this long
   * (the deadline of state-deadline.ts), so a stalled server does not keep the pool exhausted.
   */
  timeoutMs?: number;
  /** Where a failed bookkeeping write (a key's last_used_at) is logged. */
  log?: StateLog;
}

/** last_used_at is written at most this often per key (by this process; the row says so for all). */
const LAST_USED_RESOLUTION_MS = 60_000;

/** migrate() waits for another replica's migration lock and may build indexes: not a call's deadline. */
const MIGRATE_QUERY_TIMEOUT_MS = 60_000;

/** A query with the migration's client-side timeout (pg reads query_timeout per query; its types omit it). */
function migrationQuery(text: string, values?: unknown[]): pg.QueryConfig {
  return { text, values, query_timeout: MIGRATE_QUERY_TIMEOUT_MS } as pg.QueryConfig;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export class PostgresStateStore implements StateStore {
  private readonly pool: pg.Pool;
  private readonly schema: string | null;
  private closed = false;
  /** last_used_at is written aside the answer: a full disk must not refuse a valid key. */
  private readonly aside: AsideWrites;
  /** When this process last wrote (or tried to write) each key's last_used_at, by prefix. */
  private readonly lastUsedWrites = new Map<string, number>();

  constructor(options: PostgresStateStoreOptions) {
    const schema = options.schema ?? null;
    if (schema !== null && !SCHEMA_NAME.test(schema)) {
      throw new Error(`invalid schema name '${schema}' (expected [a-z_][a-z0-9_]*)`);
    }
    this.schema = schema;
    this.aside = new AsideWrites(options.log);
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.max ?? 10,
      // A startup parameter, so the search_path is in force before the first query on every
      // pooled connection (no race with a SET issued from a 'connect' handler).
      ...(schema !== null ? { options: `-c search_path=${schema}` } : {}),
      // The server cancels a slow statement (the connection stays usable); the client gives up on
      // one that gets no answer at all (a dead network) a little later and drops that connection.
      ...(options.timeoutMs
        ? {
            connectionTimeoutMillis: options.timeoutMs,
            statement_timeout: options.timeoutMs,
            query_timeout: options.timeoutMs + 500,
          }
        : {}),
    });
    // An idle client losing its connection (server restart) must not crash the process: the pool
    // drops that client and the next query opens a new connection.
    this.pool.on('error', () => undefined);
  }

  async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(migrationQuery('SET LOCAL statement_timeout = 0'));
      // Two processes starting at once: the second waits here until the first commits, then
      // finds every migration applied. The lock is released at COMMIT or ROLLBACK.
      await client.query(
        migrationQuery('SELECT pg_advisory_xact_lock(hashtext($1))', [
          `research-intensity:state-migrations:${this.schema ?? ''}`,
        ]),
      );
      if (this.schema !== null) await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(this.schema)}`);
      await client.query(migrationsTableSql('postgres'));
      const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
      for (const m of pendingMigrations(
        'postgres',
        rows.map((r) => r.version),
      )) {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          m.version,
          m.name,
        ]);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  async createAccount(input: { email: string | null; plan: Plan }): Promise<Account> {
    const email = input.email === null ? null : normaliseEmail(input.email);
    try {
      const { rows } = await this.pool.query<AccountRow>(
        `INSERT INTO accounts (id, email, plan) VALUES ($1, $2, $3) RETURNING ${ACCOUNT_COLUMNS}`,
        [randomUUID(), email, parsePlan(input.plan)],
      );
      return toAccount(rows[0]!);
    } catch (error) {
      if (pgCode(error) === '23505' && email !== null) throw new AccountExistsError(email);
      throw error;
    }
  }

  async findAccountByEmail(email: string): Promise<Account | null> {
    if (holdsNul(email)) return null;
    const { rows } = await this.pool.query<AccountRow>(
      `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE email = $1`,
      [normaliseEmail(email)],
    );
    return rows[0] ? toAccount(rows[0]) : null;
  }

  async setPlan(email: string, plan: Plan): Promise<Account> {
    const { rows } = await this.pool.query<AccountRow>(
      `UPDATE accounts SET plan = $1 WHERE email = $2 RETURNING ${ACCOUNT_COLUMNS}`,
      [parsePlan(plan), normaliseEmail(email)],
    );
    if (!rows[0]) throw new StateNotFoundError(`no account with email ${normaliseEmail(email)}`);
    return toAccount(rows[0]);
  }

  async createKey(accountId: string, name: string | null = null): Promise<{ key: string; prefix: string }> {
    return createKeyRetrying(
      async (prefix, hash) => {
        try {
          await this.pool.query(
            'INSERT INTO api_keys (prefix, key_hash, account_id, name) VALUES ($1, $2, $3, $4)',
            [prefix, hash, accountId, name],
          );
        } catch (error) {
          if (pgCode(error) === '23503') throw new StateNotFoundError(`no account with id ${accountId}`);
          throw error;
        }
      },
      (error) => pgCode(error) === '23505',
    );
  }

  async authenticate(key: string): Promise<KeyInfo | null> {
    const parsed = parseApiKey(key);
    if (!parsed) return null;
    const hash = hashApiKey(key);
    // Looked up by the hash (unique index): the secret is never compared character by character.
    const { rows } = await this.pool.query<KeyRow & { stale: boolean }>(
      `SELECT ${KEY_COLUMNS},
              (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale
         FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.key_hash = $1`,
      [hash],
    );
    const row = rows[0];
    if (!row || !hashesEqual(row.key_hash, hash) || row.prefix !== parsed.prefix) return null;
    if (row.revoked_at !== null) return null;
    // last_used_at is written at most once a minute per key, so authentication is mostly a read;
    // a failing write (a full disk) is tried again a minute later, not on every call.
    const at = Date.now();
    if (row.stale && !((this.lastUsedWrites.get(row.prefix) ?? -Infinity) > at - LAST_USED_RESOLUTION_MS)) {
      if (this.lastUsedWrites.size >= 10_000) this.lastUsedWrites.clear();
      this.lastUsedWrites.set(row.prefix, at);
      const prefix = row.prefix;
      this.aside.run('last_used_at', () =>
        this.closed
          ? undefined
          : this.pool.query('UPDATE api_keys SET last_used_at = now() WHERE prefix = $1', [prefix]),
      );
    }
    return toKeyInfo(row);
  }

  async listKeys(filter: { accountId?: string } = {}): Promise<KeyInfo[]> {
    const { rows } = await this.pool.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE ($1::text IS NULL OR k.account_id = $1) ORDER BY k.created_at, k.prefix`,
      [filter.accountId ?? null],
    );
    return rows.map(toKeyInfo);
  }

  async revokeKey(prefix: string, accountId?: string): Promise<boolean> {
    const result = await this.pool.query(
      `UPDATE api_keys SET revoked_at = now()
        WHERE prefix = $1 AND revoked_at IS NULL AND ($2::text IS NULL OR account_id = $2)`,
      [prefix, accountId ?? null],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async createFeedToken(accountId: string): Promise<{ token: string; prefix: string }> {
    return createFeedTokenRetrying(
      async (prefix, hash) => {
        try {
          await this.pool.query(
            'INSERT INTO feed_tokens (prefix, token_hash, account_id) VALUES ($1, $2, $3)',
            [prefix, hash, accountId],
          );
        } catch (error) {
          if (pgCode(error) === '23503') throw new StateNotFoundError(`no account with id ${accountId}`);
          throw error;
        }
      },
      (error) => pgCode(error) === '23505',
    );
  }

  async authenticateFeedToken(token: string): Promise<FeedTokenInfo | null> {
    const parsed = parseFeedToken(token);
    if (!parsed) return null;
    const hash = hashFeedToken(token);
    const { rows } = await this.pool.query<FeedTokenRow>(
      `SELECT ${FEED_TOKEN_COLUMNS} FROM feed_tokens f JOIN accounts a ON a.id = f.account_id
        WHERE f.token_hash = $1`,
      [hash],
    );
    const row = rows[0];
    if (!row || !hashesEqual(row.token_hash, hash) || row.prefix !== parsed.prefix) return null;
    return row.revoked_at === null ? toFeedTokenInfo(row) : null;
  }

  async listFeedTokens(accountId?: string): Promise<FeedTokenInfo[]> {
    const { rows } = await this.pool.query<FeedTokenRow>(
      `SELECT ${FEED_TOKEN_COLUMNS} FROM feed_tokens f JOIN accounts a ON a.id = f.account_id
        WHERE ($1::text IS NULL OR f.account_id = $1) ORDER BY f.created_at, f.prefix`,
      [accountId ?? null],
    );
    return rows.map(toFeedTokenInfo);
  }

  async revokeFeedToken(prefix: string, accountId?: string): Promise<boolean> {
    const result = await this.pool.query(
      `UPDATE feed_tokens SET revoked_at = now()
        WHERE prefix = $1 AND revoked_at IS NULL AND ($2::text IS NULL OR account_id = $2)`,
      [prefix, accountId ?? null],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async addUsage(month: string, calls: ReadonlyMap<string, number>): Promise<void> {
    if (calls.size === 0) return;
    // One statement for the batch; concurrent replicas add up (ON CONFLICT adds, never overwrites).
    await this.pool.query(
      `INSERT INTO key_usage (prefix, month, calls)
       SELECT u.prefix, $1, u.calls FROM unnest($2::text[], $3::bigint[]) AS u(prefix, calls)
        WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.prefix = u.prefix)
       ON CONFLICT (prefix, month) DO UPDATE SET calls = key_usage.calls + excluded.calls`,
      [month, [...calls.keys()], [...calls.values()]],
    );
  }

  async usage(accountId: string, month: string): Promise<Map<string, number>> {
    const { rows } = await this.pool.query<{ prefix: string; calls: string }>(
      `SELECT u.prefix, u.calls FROM key_usage u JOIN api_keys k ON k.prefix = u.prefix
        WHERE k.account_id = $1 AND u.month = $2`,
      [accountId, month],
    );
    return new Map(rows.map((r) => [r.prefix, Number(r.calls)]));
  }

  async saveSignInToken(tokenHash: string, email: string, expiresAt: string): Promise<void> {
    await this.pool.query(
      `WITH pruned AS (DELETE FROM sign_in_tokens WHERE expires_at < now())
       INSERT INTO sign_in_tokens (token_hash, email, expires_at) VALUES ($1, $2, $3)`,
      [tokenHash, normaliseEmail(email), expiresAt],
    );
  }

  async takeSignInToken(tokenHash: string): Promise<string | null> {
    // DELETE ... RETURNING: one replica gets the row, any other finds it gone (single use).
    const { rows } = await this.pool.query<{ email: string; live: boolean }>(
      'DELETE FROM sign_in_tokens WHERE token_hash = $1 RETURNING email, expires_at > now() AS live',
      [tokenHash],
    );
    return rows[0]?.live ? rows[0].email : null;
  }

  async createSession(session: NewSession): Promise<void> {
    await this.pool.query(
      `WITH pruned AS (DELETE FROM sessions WHERE expires_at < now())
       INSERT INTO sessions (id_hash, account_id, csrf, expires_at) VALUES ($1, $2, $3, $4)`,
      [session.idHash, session.accountId, session.csrf, session.expiresAt],
    );
  }

  async findSession(idHash: string): Promise<WebSession | null> {
    const { rows } = await this.pool.query<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM sessions s JOIN accounts a ON a.id = s.account_id
        WHERE s.id_hash = $1 AND s.expires_at > now()`,
      [idHash],
    );
    return rows[0] ? toSession(rows[0]) : null;
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.pool.query('DELETE FROM sessions WHERE id_hash = $1', [idHash]);
  }

  async saveQuote(quote: StoredQuote): Promise<void> {
    await this.pool.query(
      `WITH pruned AS (DELETE FROM quotes WHERE expires_at < now() - $4::interval)
       INSERT INTO quotes (id, body, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (id) DO UPDATE SET body = excluded.body, expires_at = excluded.expires_at`,
      [quote.id, quote.body, quote.expiresAt, `${QUOTE_RETENTION_MS / 1000} seconds`],
    );
  }

  async findQuote(id: string): Promise<string | null> {
    if (holdsNul(id)) return null;
    const { rows } = await this.pool.query<{ body: string }>('SELECT body FROM quotes WHERE id = $1', [id]);
    return rows[0]?.body ?? null;
  }

  async secret(name: string, generate: () => string): Promise<string> {
    const { rows } = await this.pool.query<{ value: string }>(
      `WITH ins AS (INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING value)
       SELECT value FROM ins UNION ALL SELECT value FROM secrets WHERE name = $1 LIMIT 1`,
      [name, generate()],
    );
    if (rows[0]) return rows[0].value;
    // Another replica stored it after this statement's snapshot was taken: read it now.
    const again = await this.pool.query<{ value: string }>('SELECT value FROM secrets WHERE name = $1', [
      name,
    ]);
    return again.rows[0]!.value;
  }

  async recordPayment(row: NewPayment): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `INSERT INTO payments (payload_hash, valid_until, data_version, id, operation, resource, amount, network, asset, payer, nonce, payment_id, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'pending') ON CONFLICT DO NOTHING`,
      paymentValues(row),
    );
    return rowCount === 1;
  }

  async finishPayment(
    id: string,
    outcome: PaymentOutcome,
    from: PaymentStatus = 'pending',
  ): Promise<boolean> {
    try {
      const { rowCount } = await this.pool.query(
        'UPDATE payments SET status = $2, "transaction" = $3, error = $4, updated_at = now() WHERE id = $1 AND status = $5',
        [
          id,
          outcome.status,
          outcome.status === 'settled' ? outcome.transaction : null,
          outcome.status === 'failed' ? outcome.error : null,
          from,
        ],
      );
      return rowCount === 1;
    } catch (error) {
      // A failed row taken back as settled while another row holds its nonce: that one stands.
      if (pgCode(error) === '23505') return false;
      throw error;
    }
  }

  async findPayment(network: string, nonce: string): Promise<PaymentRow | null> {
    const { rows } = await this.pool.query<PaymentDbRow>(
      `SELECT * FROM payments WHERE network = $1 AND nonce = $2 AND status <> 'failed'`,
      [network, nonce],
    );
    return rows[0] ? toPaymentRow(rows[0]) : null;
  }

  async findPaymentById(paymentId: string): Promise<PaymentRow | null> {
    const { rows } = await this.pool.query<PaymentDbRow>(
      `SELECT * FROM payments WHERE payment_id = $1 AND status <> 'failed'`,
      [paymentId],
    );
    return rows[0] ? toPaymentRow(rows[0]) : null;
  }

  async listPayments(filter: { since?: string; status?: PaymentStatus } = {}): Promise<PaymentRow[]> {
    const { rows } = await this.pool.query<PaymentDbRow>(
      `SELECT * FROM payments WHERE ($1::timestamptz IS NULL OR created_at >= $1) AND ($2::text IS NULL OR status = $2)
       ORDER BY created_at DESC, id`,
      [filter.since ?? null, filter.status ?? null],
    );
    return rows.map(toPaymentRow);
  }

  async createWebhookSubscription(
    input: NewWebhookSubscription,
    limit: number,
  ): Promise<WebhookSubscription | null> {
    const id = newSubscriptionId();
    const { rowCount } = await this.pool.query(
      `INSERT INTO webhook_subscriptions (id, account_id, url, subjects, min_move, secret, created_version)
       SELECT $1, $2, $3, $4, $5, $6, $7 WHERE (SELECT count(*) FROM webhook_subscriptions WHERE account_id = $2) < $8`,
      [
        id,
        input.accountId,
        input.url,
        input.subjects.join('\n'),
        input.minMove,
        input.secret,
        input.createdVersion,
        limit,
      ],
    );
    if (rowCount !== 1) return null;
    return (await this.listWebhookSubscriptions(input.accountId)).find((s) => s.id === id)!;
  }

  async listWebhookSubscriptions(accountId?: string): Promise<WebhookSubscription[]> {
    const { rows } = await this.pool.query<SubscriptionRow>(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM webhook_subscriptions s JOIN accounts a ON a.id = s.account_id
        WHERE ($1::text IS NULL OR s.account_id = $1) ORDER BY s.created_at, s.id`,
      [accountId ?? null],
    );
    return rows.map(toSubscription);
  }

  async webhookTarget(id: string, accountId?: string): Promise<{ url: string; secret: string } | null> {
    if (holdsNul(id)) return null;
    const { rows } = await this.pool.query<{ url: string; secret: string }>(
      'SELECT url, secret FROM webhook_subscriptions WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)',
      [id, accountId ?? null],
    );
    return rows[0] ?? null;
  }

  async deleteWebhookSubscription(id: string, accountId?: string): Promise<boolean> {
    if (holdsNul(id)) return false;
    // Its events and log go with it (ON DELETE CASCADE); an event leased meanwhile is not logged.
    const { rowCount } = await this.pool.query(
      'DELETE FROM webhook_subscriptions WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)',
      [id, accountId ?? null],
    );
    return (rowCount ?? 0) > 0;
  }

  async enqueueWebhookEvents(events: readonly NewWebhookEvent[], nowIso: string): Promise<number> {
    if (events.length === 0) return 0;
    // Replicas make the same events at a publication: the id keeps one (ON CONFLICT DO NOTHING).
    const { rowCount } = await this.pool.query(
      `INSERT INTO webhook_outbox (id, subscription_id, data_version, body, status, next_attempt_at, created_at)
       SELECT e.id, e.subscription_id, e.data_version, e.body, 'pending', $5, $5
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS e(id, subscription_id, data_version, body)
        WHERE EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = e.subscription_id)
       ON CONFLICT (id) DO NOTHING`,
      [
        events.map((e) => e.id),
        events.map((e) => e.subscriptionId),
        events.map((e) => e.dataVersion),
        events.map((e) => e.body),
        nowIso,
      ],
    );
    return rowCount ?? 0;
  }

  async claimWebhookEvents(
    limit: number,
    nowIso: string,
    leaseUntilIso: string,
  ): Promise<ClaimedWebhookEvent[]> {
    // SKIP LOCKED: a replica claiming at the same moment passes over the rows this one locked, and
    // the lease then keeps them from every other replica until this one records the attempt.
    const { rows } = await this.pool.query<ClaimedRow>(
      `WITH due AS (
         SELECT id FROM webhook_outbox
          WHERE status = 'pending' AND next_attempt_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
          ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
       UPDATE webhook_outbox o SET lease_until = $2, attempts = o.attempts + 1
         FROM due, webhook_subscriptions s
        WHERE o.id = due.id AND s.id = o.subscription_id
       RETURNING o.id, o.subscription_id, o.body, o.attempts, o.created_at, s.url, s.secret`,
      [nowIso, leaseUntilIso, limit],
    );
    return rows.map(toClaimed);
  }

  async recordWebhookAttempt(attempt: WebhookAttempt): Promise<void> {
    await this.pool.query(
      `WITH logged AS (
         INSERT INTO webhook_attempts (id, subscription_id, event_id, attempted_at, outcome, response_status, error)
         SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM webhook_subscriptions WHERE id = $2))
       UPDATE webhook_outbox SET status = $8, next_attempt_at = coalesce($9, next_attempt_at), lease_until = NULL
        WHERE id = $3`,
      [
        randomUUID(),
        attempt.subscriptionId,
        attempt.eventId,
        attempt.at,
        attempt.outcome,
        attempt.status,
        attempt.error,
        outboxStatus(attempt),
        attempt.nextAttemptAt ?? null,
      ],
    );
  }

  async webhookAttempts(accountId: string, limit: number): Promise<(WebhookAttempt & { url: string })[]> {
    const { rows } = await this.pool.query<AttemptRow>(
      `SELECT w.event_id, w.subscription_id, w.attempted_at, w.outcome, w.response_status, w.error, s.url
         FROM webhook_attempts w JOIN webhook_subscriptions s ON s.id = w.subscription_id
        WHERE s.account_id = $1 ORDER BY w.attempted_at DESC, w.id LIMIT $2`,
      [accountId, limit],
    );
    return rows.map(toAttempt);
  }

  async pruneWebhookOutbox(
    beforeIso: string,
    keepVersions: readonly string[],
    limit: number,
  ): Promise<{ events: number; attempts: number }> {
    // SKIP LOCKED: replicas pruning at once each take other rows and never wait on one another
    // (nor deadlock); a row claimed or being recorded is pending or too new to be chosen anyway.
    const { rows } = await this.pool.query<{ events: string; attempts: string }>(
      `WITH events AS (
         DELETE FROM webhook_outbox WHERE id IN (
           SELECT id FROM webhook_outbox
            WHERE status IN ('delivered', 'failed') AND created_at < $1 AND data_version <> ALL($2::text[])
            LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING 1),
       attempts AS (
         DELETE FROM webhook_attempts WHERE id IN (
           SELECT id FROM webhook_attempts WHERE attempted_at < $1 LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING 1)
       SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM attempts) AS attempts`,
      [beforeIso, [...keepVersions], limit],
    );
    return { events: Number(rows[0]!.events), attempts: Number(rows[0]!.attempts) };
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.aside.settled();
    await this.pool.end();
  }
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function pgCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** PostgreSQL text cannot hold NUL (the query fails): a value from a client that has one matches no row. */
function holdsNul(value: string): boolean {
  return value.includes('\u0000');
}

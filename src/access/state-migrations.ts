/**
 * The state stores' migrations, one list for SQLite and PostgreSQL. Each store runs the versions
 * its table schema_migrations does not hold yet, in its own transaction and lock; the SQL is the
 * same for both but for the column types below (timestamps, counters, defaults).
 *
 * Append-only: a released migration is never edited, a change is a new version. Version numbers
 * and names are those of the releases before this list was shared, so a database made by an
 * older release is recognised as it is (test/integration/access/state-migrations.test.ts opens one).
 *
 * Hand-written SQL, not Kysely. What the x402 payments ledger needs is that the database itself
 * refuses a second use of a payment: the partial unique indexes `payments_one_use (network, nonce)
 * WHERE status <> 'failed'` and `payments_one_id`, with `INSERT ... ON CONFLICT DO NOTHING`, plus
 * `DELETE ... RETURNING` (single-use sign-in links) and an advisory lock for migrations. Kysely
 * can say all of these (its onConflict takes an index WHERE), but they are DDL and plain SQL
 * that both engines already speak alike; the statements that do differ (the PostgreSQL batch
 * through `unnest`, `WITH pruned AS (DELETE ...)`, `now()` against an ISO string from Node,
 * SQLite's `PRAGMA data_version` login cache) would stay raw `sql` under Kysely too, and the
 * SQLite store's login path, one synchronous prepared statement, would gain a query compilation
 * and an async hop per call. So a new dependency would buy typed column names for about twenty
 * statements that test/integration/access/state-store.test.ts already runs on both engines: not worth it.
 */
import { PLANS } from './plans.js';

export type Dialect = 'sqlite' | 'postgres';

/** The column types that differ between the two engines; everything else is written once. */
interface ColumnTypes {
  /** A point in time: ISO 8601 text in SQLite, timestamptz in PostgreSQL. */
  time: string;
  /** A creation time: written by the SQLite store, defaulted by PostgreSQL. */
  createdAt: string;
  /** A counter that may pass 2^31. */
  count: string;
}

const TYPES: Record<Dialect, ColumnTypes> = {
  sqlite: { time: 'TEXT', createdAt: 'TEXT NOT NULL', count: 'INTEGER' },
  postgres: { time: 'timestamptz', createdAt: 'timestamptz NOT NULL DEFAULT now()', count: 'bigint' },
};

export interface Migration {
  version: number;
  name: string;
  sql(t: ColumnTypes): string;
}

const PLAN_CHECK = PLANS.map((p) => `'${p}'`).join(', ');

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'accounts and api keys',
    sql: (t) => `
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        email TEXT UNIQUE,
        plan TEXT NOT NULL CHECK (plan IN (${PLAN_CHECK})),
        created_at ${t.createdAt}
      );
      CREATE TABLE api_keys (
        prefix TEXT PRIMARY KEY,
        key_hash TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        created_at ${t.createdAt},
        revoked_at ${t.time},
        last_used_at ${t.time}
      );
      CREATE INDEX api_keys_account_id ON api_keys(account_id);
    `,
  },
  {
    version: 2,
    name: 'lab quotes and shared secrets',
    sql: (t) => `
      CREATE TABLE quotes (
        id TEXT PRIMARY KEY,
        body TEXT NOT NULL,
        expires_at ${t.time} NOT NULL
      );
      CREATE INDEX quotes_expires_at ON quotes(expires_at);
      CREATE TABLE secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'payments ledger',
    sql: (t) => `
      CREATE TABLE payments (
        id TEXT PRIMARY KEY,
        operation TEXT NOT NULL,
        resource TEXT NOT NULL,
        amount TEXT NOT NULL,
        network TEXT NOT NULL,
        asset TEXT NOT NULL,
        payer TEXT NOT NULL,
        nonce TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'settled', 'failed')),
        "transaction" TEXT,
        error TEXT,
        created_at ${t.createdAt},
        updated_at ${t.createdAt}
      );
      CREATE UNIQUE INDEX payments_one_use ON payments(network, nonce) WHERE status <> 'failed';
      CREATE INDEX payments_created_at ON payments(created_at);
    `,
  },
  {
    version: 4,
    name: 'web accounts: key names, usage, sign-in links, sessions',
    sql: (t) => `
      ALTER TABLE api_keys ADD COLUMN name TEXT;
      CREATE TABLE key_usage (
        prefix TEXT NOT NULL REFERENCES api_keys(prefix),
        month TEXT NOT NULL,
        calls ${t.count} NOT NULL,
        PRIMARY KEY (prefix, month)
      );
      CREATE TABLE sign_in_tokens (
        token_hash TEXT PRIMARY KEY,
        email TEXT NOT NULL,
        expires_at ${t.time} NOT NULL
      );
      CREATE INDEX sign_in_tokens_expires_at ON sign_in_tokens(expires_at);
      CREATE TABLE sessions (
        id_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        csrf TEXT NOT NULL,
        created_at ${t.createdAt},
        expires_at ${t.time} NOT NULL
      );
      CREATE INDEX sessions_expires_at ON sessions(expires_at);
    `,
  },
  {
    version: 5,
    name: 'payment identifiers (x402 payment-identifier: idempotent retries)',
    sql: () => `
      ALTER TABLE payments ADD COLUMN payment_id TEXT;
      CREATE UNIQUE INDEX payments_one_id ON payments(payment_id) WHERE payment_id IS NOT NULL AND status <> 'failed';
    `,
  },
  {
    version: 6,
    name: 'payments: what a retry must match (the signed payment, its validity, the data answered)',
    sql: (t) => `
      ALTER TABLE payments ADD COLUMN payload_hash TEXT;
      ALTER TABLE payments ADD COLUMN valid_until ${t.time};
      ALTER TABLE payments ADD COLUMN data_version TEXT;
    `,
  },
  {
    version: 7,
    name: 'feed tokens (the credential a feed URL carries)',
    sql: (t) => `
      CREATE TABLE feed_tokens (
        prefix TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        created_at ${t.createdAt},
        revoked_at ${t.time}
      );
      CREATE INDEX feed_tokens_account_id ON feed_tokens(account_id);
    `,
  },
  {
    version: 8,
    name: 'webhooks: subscriptions, the outbox of events and the log of attempts',
    // The secret is kept as it is (it signs: a hash could not), as the quote-signing secret is.
    // Subjects are kind/id lines. Deleting a subscription deletes its events and its log.
    sql: (t) => `
      CREATE TABLE webhook_subscriptions (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        url TEXT NOT NULL,
        subjects TEXT NOT NULL,
        min_move DOUBLE PRECISION NOT NULL,
        secret TEXT NOT NULL,
        created_version TEXT,
        created_at ${t.createdAt}
      );
      CREATE INDEX webhook_subscriptions_account_id ON webhook_subscriptions(account_id);
      CREATE TABLE webhook_outbox (
        id TEXT PRIMARY KEY,
        subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
        data_version TEXT NOT NULL,
        body TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at ${t.time} NOT NULL,
        lease_until ${t.time},
        created_at ${t.time} NOT NULL
      );
      CREATE INDEX webhook_outbox_due ON webhook_outbox(status, next_attempt_at);
      CREATE INDEX webhook_outbox_subscription_id ON webhook_outbox(subscription_id);
      CREATE TABLE webhook_attempts (
        id TEXT PRIMARY KEY,
        subscription_id TEXT NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
        event_id TEXT NOT NULL,
        attempted_at ${t.time} NOT NULL,
        outcome TEXT NOT NULL,
        response_status INTEGER,
        error TEXT
      );
      CREATE INDEX webhook_attempts_subscription ON webhook_attempts(subscription_id, attempted_at);
    `,
  },
];

/** The table that records which versions a database holds (created before any migration runs). */
export function migrationsTableSql(dialect: Dialect): string {
  return `CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at ${TYPES[dialect].createdAt}
  )`;
}

/** The migrations a database holding `applied` still needs, oldest first, with their SQL for `dialect`. */
export function pendingMigrations(
  dialect: Dialect,
  applied: Iterable<number>,
): { version: number; name: string; sql: string }[] {
  const have = new Set(applied);
  return MIGRATIONS.filter((m) => !have.has(m.version)).map((m) => ({
    version: m.version,
    name: m.name,
    sql: m.sql(TYPES[dialect]),
  }));
}

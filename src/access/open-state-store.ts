/**
 * Opening the state store named by STATE_URL. Apart from the interface (state-store.ts), so the
 * stores, which import the interface, are not imported back by it.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DEFAULT_STATE_TIMEOUT_MS, type StateLog, withDeadline } from './state-deadline.js';
import { type StateStore, StateUrlError } from './state-store.js';

export interface OpenStateOptions {
  /** The deadline on every call (state-deadline.ts); default DEFAULT_STATE_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Where the store's unavailability and recovery are logged. */
  log?: StateLog;
}

/** Migrations may wait for another replica's lock and build indexes: a longer bound than a call's. */
const MIGRATE_TIMEOUT_MS = 60_000;

/**
 * Opens (and migrates) the state store named by STATE_URL, every call under a deadline:
 * - undefined or empty: SQLite file `${dataDir}/state.sqlite`
 * - `sqlite:PATH`: that SQLite file (relative to the working directory)
 * - `postgres://...` or `postgresql://...`: PostgreSQL. An extra query parameter `schema=NAME`
 *   puts the tables in that schema (created if missing) instead of the default search_path.
 */
export async function openStateStore(
  url: string | undefined,
  dataDir: string,
  options: OpenStateOptions = {},
): Promise<StateStore> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_STATE_TIMEOUT_MS;
  let store: StateStore;
  if (url === undefined || url.trim() === '') {
    mkdirSync(dataDir, { recursive: true });
    store = await openSqlite(join(dataDir, 'state.sqlite'), options.log);
  } else if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '') throw new StateUrlError('STATE_URL sqlite: needs a file path (sqlite:PATH)');
    if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
    store = await openSqlite(path, options.log);
  } else if (/^postgres(ql)?:\/\//i.test(url)) {
    const { PostgresStateStore } = await import('./postgres-state-store.js');
    const { connectionString, schema } = splitSchemaParam(url);
    store = new PostgresStateStore({
      connectionString,
      timeoutMs,
      ...(schema ? { schema } : {}),
      ...(options.log ? { log: options.log } : {}),
    });
  } else {
    throw new StateUrlError(
      `unsupported STATE_URL '${redactUrl(url)}' (expected postgres://..., postgresql://... or sqlite:PATH)`,
    );
  }
  const bounded = withDeadline(store, { timeoutMs, ...(options.log ? { log: options.log } : {}) });
  try {
    // Bounded too (a stalled server must not hold the start forever), keeping the driver's message.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      migrateOnceAnswered(store),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${MIGRATE_TIMEOUT_MS / 1000} s`)),
          MIGRATE_TIMEOUT_MS,
        );
      }),
    ]).finally(() => clearTimeout(timer));
  } catch (error) {
    await bounded.close().catch(() => undefined);
    throw error;
  }
  return bounded;
}

/**
 * A connection that timed out (a server slow to answer, in a boot storm or a stall), which a start
 * tries again until the migration's deadline; a refusal or a bad password fails at once.
 */
const CONNECT_TIMED_OUT = /connection timeout|timeout exceeded when trying to connect/i;

async function migrateOnceAnswered(store: StateStore): Promise<void> {
  for (;;) {
    try {
      return await store.migrate();
    } catch (e) {
      if (!CONNECT_TIMED_OUT.test((e as Error).message)) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function openSqlite(path: string, log: StateLog | undefined): Promise<StateStore> {
  const { SqliteStateStore } = await import('./sqlite-state-store.js');
  return new SqliteStateStore(path, log ? { log } : {});
}

/** Takes `schema=NAME` out of a PostgreSQL URL (pg does not know it). */
export function splitSchemaParam(url: string): { connectionString: string; schema: string | null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StateUrlError(`STATE_URL is not a valid URL: '${redactUrl(url)}'`);
  }
  const schema = parsed.searchParams.get('schema');
  if (schema === null) return { connectionString: url, schema: null };
  parsed.searchParams.delete('schema');
  return { connectionString: parsed.toString(), schema };
}

/** A URL with its password replaced, for error messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}

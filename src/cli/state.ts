import { chmodSync, closeSync, existsSync, linkSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { redactUrl, splitSchemaParam } from '../access/open-state-store.js';
import { loadConfig } from '../config/config.js';
import { CliError, parsedOrCliError, printedHelp } from './cli-error.js';
import { STATE_USAGE } from './keys.js';

const USAGE = `usage: ri state backup FILE
       ri state restore FILE

backup   copies the SQLite state store (accounts, keys, the payments ledger, quotes, the
         quote-signing secret) into FILE while servers keep running (SQLite's online backup).
         FILE is written owner-only (0600), checked (integrity_check) and never replaced: it
         must not exist yet.
restore  writes the state store from FILE, a backup made by 'ri state backup', only where no
         state file exists yet: into a fresh DATA_DIR (or sqlite:PATH), or after every server
         using the old one has stopped and state.sqlite, -wal and -shm were moved aside. It never
         replaces a file a server may have open.

PostgreSQL (STATE_URL postgres://...): both print the pg_dump / pg_restore command to run and
exit 1 (docs/operations.md, "Backups").

${STATE_USAGE}`;

/** The tables counted in the report of a backup or restore (a check that the rows are there). */
const COUNTED = ['accounts', 'api_keys', 'payments'] as const;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parsedOrCliError(() => parse(args));
  if (printedHelp(values, USAGE)) return 0;
  const [sub, file, ...rest] = positionals;
  if (sub !== 'backup' && sub !== 'restore') {
    throw new CliError(
      sub === undefined
        ? `no subcommand given\n${USAGE}`
        : `unknown subcommand 'state ${sub}' (backup or restore)`,
    );
  }
  if (file === undefined || file === '') throw new CliError(`state ${sub} needs a FILE\n${USAGE}`);
  if (rest.length > 0) throw new CliError(`unexpected argument '${rest[0]}' for state ${sub}`);

  // A bad configuration value is ConfigError: one line, exit 1 (main.ts).
  const config = loadConfig();
  const url = config.STATE_URL;
  const dataDir = values['data-dir'] ?? config.DATA_DIR;
  if (url !== undefined && /^postgres(ql)?:\/\//i.test(url))
    throw new CliError(postgresAdvice(sub, url, file), 1);
  const state = statePath(url, dataDir);
  return sub === 'backup' ? backup(state, file) : restore(state, file);
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
}

/** The SQLite state file, as openStateStore() names it. */
function statePath(url: string | undefined, dataDir: string): string {
  if (url === undefined || url.trim() === '') return resolve(join(dataDir, 'state.sqlite'));
  const path = url.slice('sqlite:'.length);
  if (path === '' || path === ':memory:')
    throw new CliError(`STATE_URL ${url} names no file to back up or restore`, 1);
  return resolve(path);
}

async function backup(state: string, file: string): Promise<number> {
  if (!existsSync(state)) throw new CliError(`no state file at ${state}: nothing to back up`, 1);
  const target = resolve(file);
  if (existsSync(target))
    throw new CliError(`${file} exists: a backup never replaces a file, choose a new name`, 1);
  const counts = await writeOwnerOnly(target, async (partial) => {
    const { SqliteStateStore } = await import('../access/sqlite-state-store.js');
    const store = new SqliteStateStore(state);
    try {
      await store.backup(partial);
    } finally {
      await store.close();
    }
    // One self-contained file (no -wal beside it), checked before it is given its name.
    const copy = new Database(partial);
    try {
      copy.pragma('journal_mode = DELETE');
      return checked(copy, partial);
    } finally {
      copy.close();
    }
  });
  process.stderr.write(`backed up ${state} to ${file} (0600): ${counts}\n`);
  return 0;
}

async function restore(state: string, file: string): Promise<number> {
  const source = resolve(file);
  if (!existsSync(source)) throw new CliError(`no backup at ${file}`, 1);
  const present = [state, `${state}-wal`, `${state}-shm`].filter((f) => existsSync(f));
  if (present.length > 0) {
    throw new CliError(
      `${present.join(', ')} exists: restore writes only a state file that does not exist yet. ` +
        'Stop every server using it, move state.sqlite, -wal and -shm aside, then restore again ' +
        '(or restore into a fresh --data-dir).',
      1,
    );
  }
  let backupDb: Database.Database;
  try {
    backupDb = new Database(source, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new CliError(`${file} is not a readable SQLite file: ${(error as Error).message}`, 1);
  }
  try {
    let counts: string;
    try {
      counts = checked(backupDb, file);
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(`${file} cannot be read as a state backup: ${(error as Error).message}`, 1);
    }
    mkdirSync(dirname(state), { recursive: true });
    await writeOwnerOnly(state, (partial) => backupDb.backup(partial));
    process.stderr.write(`restored ${state} from ${file} (0600): ${counts}\n`);
    return 0;
  } finally {
    backupDb.close();
  }
}

/**
 * Writes `target` through a 0600 file beside it that takes the name only when complete, and
 * never over an existing file (a hard link fails if the name was taken meanwhile).
 */
async function writeOwnerOnly<T>(target: string, write: (partial: string) => Promise<T>): Promise<T> {
  const partial = `${target}.partial-${process.pid}`;
  closeSync(openSync(partial, 'wx', 0o600));
  try {
    const result = await write(partial);
    chmodSync(partial, 0o600);
    try {
      linkSync(partial, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST')
        throw new CliError(`${target} exists: not replaced`, 1);
      throw error;
    }
    return result;
  } finally {
    for (const f of [partial, `${partial}-journal`, `${partial}-wal`, `${partial}-shm`])
      rmSync(f, { force: true });
  }
}

/** Throws unless `db` passes integrity_check and holds the state tables; returns their row counts. */
function checked(db: Database.Database, name: string): string {
  const integrity = db.pragma('integrity_check', { simple: true });
  if (integrity !== 'ok')
    throw new CliError(`${name} fails SQLite's integrity check: ${String(integrity)}`, 1);
  const tables = new Set(
    db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[],
  );
  if (!tables.has('schema_migrations') || !tables.has('api_keys'))
    throw new CliError(`${name} is not a state store (no schema_migrations or api_keys table)`, 1);
  return COUNTED.filter((t) => tables.has(t))
    .map((t) => `${db.prepare(`SELECT count(*) FROM ${t}`).pluck().get()} ${t}`)
    .join(', ');
}

/** The PostgreSQL tools' commands for this STATE_URL (password left out: PGPASSWORD or ~/.pgpass). */
function postgresAdvice(sub: 'backup' | 'restore', url: string, file: string): string {
  const { connectionString, schema } = splitSchemaParam(url);
  const db = quote(redactUrl(connectionString).replace(/:\*\*\*@/, '@'));
  const command =
    sub === 'backup'
      ? `pg_dump --format=custom${schema ? ` --schema=${schema}` : ''} --file=${quote(file)} ${db}`
      : `pg_restore --clean --if-exists --dbname=${db} ${quote(file)}`;
  return (
    `ri state ${sub} works on the SQLite state store; STATE_URL is PostgreSQL, whose own tools do it:\n` +
    `  ${command}\n` +
    `(password from PGPASSWORD or ~/.pgpass; ${sub === 'restore' ? 'stop every replica first; ' : ''}see docs/operations.md, "Backups")`
  );
}

function quote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

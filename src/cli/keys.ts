import { parseArgs } from 'node:util';
import { PREFIX_PATTERN } from '../access/api-keys.js';
import { openStateStore, redactUrl } from '../access/open-state-store.js';
import { PLANS, type Plan, parsePlan, UnknownPlanError } from '../access/plans.js';
import { type Account, AccountExistsError, type StateStore, StateUrlError } from '../access/state-store.js';
import { ConfigError, loadConfig } from '../config/config.js';
import { CliError, parsedOrCliError, printedHelp } from './cli-error.js';
import { printTable } from './table.js';

/** How the state commands (keys, plans, payments, state) find the state store: the end of their usage. */
export const STATE_USAGE = `State: STATE_URL (postgres://... or sqlite:PATH), else DATA_DIR/state.sqlite.
Options: --data-dir DIR overrides DATA_DIR.`;

const USAGE = `usage: ri keys create --plan ${PLANS.join('|')} [--email E]
       ri keys list
       ri keys revoke PREFIX

create  creates the account if needed (the one with that email, else a new account without
        email) and a new API key for it. The key is printed alone on the last line of stdout:
        this is the only time it is shown; only its hash is stored.
list    every key: prefix, plan, email, created, revoked (never the key or its hash).
revoke  revokes the key with that prefix (the 8 characters after 'ri_'), at once for every server.

${STATE_USAGE}`;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseCliArgs(args);
  if (printedHelp(values, USAGE)) return 0;
  const [sub, ...rest] = positionals;
  if (sub === undefined) throw new CliError(`no subcommand given\n${USAGE}`);
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke') {
    throw new CliError(`unknown subcommand 'keys ${sub}' (expected create, list or revoke)`);
  }

  if (sub === 'create') {
    if (rest.length > 0) throw new CliError(`unexpected argument '${rest[0]}' for keys create`);
    if (values.plan === undefined) throw new CliError(`keys create needs --plan ${PLANS.join('|')}`);
    const plan = toPlan(values.plan);
    const email = values.email?.trim();
    if (email === '') throw new CliError('--email is empty');
    if (email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(email))
      throw new CliError(`not an email address: '${email}'`);
    return withStore(values['data-dir'], (store) => createKey(store, plan, email ?? null));
  }
  if (values.plan !== undefined || values.email !== undefined) {
    throw new CliError(`--plan and --email are options of keys create, not keys ${sub}`);
  }
  if (sub === 'list') {
    if (rest.length > 0) throw new CliError(`unexpected argument '${rest[0]}' for keys list`);
    return withStore(values['data-dir'], listKeys);
  }
  if (rest.length !== 1) throw new CliError('keys revoke needs exactly one PREFIX');
  const prefix = rest[0]!.trim().toLowerCase();
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new CliError(`not a key prefix: '${rest[0]}' (8 characters a-z 0-9, as shown by 'ri keys list')`);
  }
  return withStore(values['data-dir'], async (store) => {
    if (!(await store.revokeKey(prefix))) throw new CliError(`no active key with prefix ${prefix}`, 1);
    process.stderr.write(`revoked key ${prefix}\n`);
    return 0;
  });
}

function parseCliArgs(args: string[]) {
  return parsedOrCliError(() =>
    parseArgs({
      args,
      allowPositionals: true,
      options: {
        plan: { type: 'string' },
        email: { type: 'string' },
        'data-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }),
  );
}

export function toPlan(s: string): Plan {
  try {
    return parsePlan(s);
  } catch (error) {
    if (error instanceof UnknownPlanError) throw new CliError(error.message);
    throw error;
  }
}

/** Opens the store named by STATE_URL (else DATA_DIR/state.sqlite), runs `fn`, always closes it. */
export async function withStore(
  dataDir: string | undefined,
  fn: (store: StateStore) => Promise<number>,
): Promise<number> {
  const url = process.env.STATE_URL;
  let store: StateStore;
  try {
    // loadConfig() also validates the environment (STATE_URL included) even when --data-dir is given.
    const config = loadConfig();
    store = await openStateStore(url, dataDir ?? config.DATA_DIR, { timeoutMs: config.STATE_TIMEOUT_MS });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A bad configuration value: one line, exit 1 (2 is for bad arguments).
    if (error instanceof StateUrlError || error instanceof ConfigError) throw new CliError(message, 1);
    const where = url ? redactUrl(url) : 'the SQLite file in DATA_DIR';
    throw new CliError(`cannot open the state store (${where}): ${message.split('\n')[0]}`, 1);
  }
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

async function createKey(store: StateStore, plan: Plan, email: string | null): Promise<number> {
  let account: Account;
  if (email === null) {
    account = await store.createAccount({ email: null, plan });
    process.stderr.write(`created account ${account.id} (no email, plan ${plan})\n`);
  } else {
    const existing = await findOrCreate(store, email, plan);
    account = existing.account;
    if (existing.created) {
      process.stderr.write(`created account ${account.id} (${account.email}, plan ${plan})\n`);
    } else if (account.plan !== plan) {
      // The plan belongs to the account, not the key: do not change it as a side effect.
      throw new CliError(
        `account ${account.email} has plan ${account.plan}, not ${plan}; ` +
          `change it with 'ri plans set ${account.email} ${plan}' or pass --plan ${account.plan}`,
      );
    } else {
      process.stderr.write(`account ${account.id} (${account.email}, plan ${account.plan}) exists\n`);
    }
  }
  const { key, prefix } = await store.createKey(account.id);
  process.stderr.write(`created key ${prefix}; it is shown once, below, and cannot be recovered\n`);
  process.stdout.write(`${key}\n`);
  return 0;
}

async function findOrCreate(
  store: StateStore,
  email: string,
  plan: Plan,
): Promise<{ account: Account; created: boolean }> {
  const found = await store.findAccountByEmail(email);
  if (found) return { account: found, created: false };
  try {
    return { account: await store.createAccount({ email, plan }), created: true };
  } catch (error) {
    // Created by someone else between the lookup and the insert.
    if (!(error instanceof AccountExistsError)) throw error;
    const raced = await store.findAccountByEmail(email);
    if (!raced) throw error;
    return { account: raced, created: false };
  }
}

async function listKeys(store: StateStore): Promise<number> {
  const keys = await store.listKeys();
  const header = ['PREFIX', 'PLAN', 'EMAIL', 'CREATED', 'REVOKED'];
  const rows = keys.map((k) => [k.prefix, k.plan, k.email ?? '-', k.createdAt, k.revokedAt ?? '-']);
  printTable(header, rows, 'no keys');
  return 0;
}

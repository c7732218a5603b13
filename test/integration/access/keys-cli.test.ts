import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../../src/access/api-keys.js';
import { openStateStore } from '../../../src/access/open-state-store.js';
import type { StateStore } from '../../../src/access/state-store.js';

// The built CLI modules (npm test builds dist first via pretest). Until `keys` and `plans` are
// registered in main.ts this runs each module's run() the way main.ts does, in a child process.
const DIST = resolve(import.meta.dirname, '../../../dist/cli');
const PG_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const KEY = /^ri_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/;

const WRAPPER = `
const [modulePath, ...args] = process.argv.slice(1);
const { CliError } = await import(${JSON.stringify(pathToFileURL(join(DIST, 'cli-error.js')).href)});
try {
  const mod = await import(modulePath);
  process.exitCode = await mod.run(args);
} catch (error) {
  if (error instanceof CliError) {
    process.stderr.write('ri: ' + error.message + '\\n');
    process.exitCode = error.exitCode;
  } else {
    process.stderr.write('ri: ' + (error?.stack ?? String(error)) + '\\n');
    process.exitCode = 1;
  }
}`;

type Env = Record<string, string | undefined>;

function ri(command: 'keys' | 'plans', args: string[], env: Env) {
  const moduleUrl = pathToFileURL(join(DIST, `${command}.js`)).href;
  const childEnv: Env = {
    ...process.env,
    LOG_LEVEL: 'silent',
    STATE_URL: undefined,
    DATA_DIR: undefined,
    ...env,
  };
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', WRAPPER, '--', moduleUrl, ...args], {
    encoding: 'utf8',
    env: Object.fromEntries(Object.entries(childEnv).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv,
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function lastLine(stdout: string): string {
  return stdout.trimEnd().split('\n').at(-1) ?? '';
}

interface Target {
  name: string;
  setup(): Promise<{ env: Env; open(): Promise<StateStore>; teardown(): Promise<void> }>;
}

const targets: Target[] = [
  {
    name: 'SQLite in DATA_DIR',
    async setup() {
      const dataDir = mkdtempSync(join(tmpdir(), 'ri-keys-cli-'));
      return {
        env: { DATA_DIR: dataDir },
        open: () => openStateStore(undefined, dataDir),
        async teardown() {
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'PostgreSQL at STATE_URL',
    async setup() {
      const schema = `ri_test_${randomBytes(6).toString('hex')}`;
      const url = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}schema=${schema}`;
      const dataDir = mkdtempSync(join(tmpdir(), 'ri-keys-cli-'));
      // Fails (does not skip) when PostgreSQL is not reachable.
      const probe = await openStateStore(url, dataDir);
      await probe.close();
      return {
        env: { STATE_URL: url, DATA_DIR: dataDir },
        open: () => openStateStore(url, dataDir),
        async teardown() {
          rmSync(dataDir, { recursive: true, force: true });
          const client = new pg.Client({ connectionString: PG_URL });
          await client.connect();
          await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          await client.end();
        },
      };
    },
  },
];

it('has built CLI modules (run `npm run build` first)', () => {
  for (const m of ['keys.js', 'plans.js', 'cli-error.js']) {
    expect(existsSync(join(DIST, m)), `${join(DIST, m)} is missing: run npm run build`).toBe(true);
  }
});

describe.each(targets)('ri keys / ri plans: $name', (target) => {
  let env: Env;
  let store: StateStore;
  let teardown: () => Promise<void>;

  beforeAll(async () => {
    const t = await target.setup();
    env = t.env;
    teardown = t.teardown;
    store = await t.open();
  });

  afterAll(async () => {
    await store?.close();
    await teardown?.();
  });

  it('keys create prints the new key alone on the last line of stdout, info on stderr', async () => {
    const r = ri('keys', ['create', '--plan', 'free'], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(1);
    const key = lastLine(r.stdout);
    expect(key).toMatch(KEY);
    expect(r.stderr).toMatch(/created account/);
    expect(r.stderr).toMatch(/created key [a-z0-9]{8}/);
    const info = await store.authenticate(key);
    expect(info).toMatchObject({ plan: 'free', email: null, revokedAt: null });
  });

  it('keys create --email creates the account once and adds keys to it; a different plan is refused', async () => {
    const email = `cli-${randomBytes(4).toString('hex')}@example.org`;
    const first = ri('keys', ['create', '--plan', 'Personal', '--email', email], env);
    expect(first.status, first.stderr).toBe(0);
    const second = ri('keys', ['create', '--email', email.toUpperCase(), '--plan', 'personal'], env);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/exists/);
    const a = await store.authenticate(lastLine(first.stdout));
    const b = await store.authenticate(lastLine(second.stdout));
    expect(a).toMatchObject({ email, plan: 'personal' });
    expect(b?.accountId).toBe(a?.accountId);
    expect(b?.prefix).not.toBe(a?.prefix);

    const conflicting = ri('keys', ['create', '--plan', 'professional', '--email', email], env);
    expect(conflicting.status).toBe(2);
    expect(conflicting.stdout).toBe('');
    expect(conflicting.stderr).toMatch(/has plan personal, not professional.*ri plans set/);
  });

  it('keys list shows prefix, plan, email, created and revoked, never the key or its hash', async () => {
    const email = `list-${randomBytes(4).toString('hex')}@example.org`;
    const created = ri('keys', ['create', '--plan', 'professional', '--email', email], env);
    const key = lastLine(created.stdout);
    const prefix = key.split('_')[1]!;
    const r = ri('keys', ['list'], env);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^PREFIX\s+PLAN\s+EMAIL\s+CREATED\s+REVOKED$/);
    const row = lines.find((l) => l.startsWith(prefix));
    expect(row).toMatch(
      new RegExp(
        `^${prefix}\\s+professional\\s+${email.replace(/\./g, '\\.')}\\s+\\d{4}-\\d\\d-\\d\\dT\\S+\\s+-$`,
      ),
    );
    expect(r.stdout).not.toContain(key);
    expect(r.stdout).not.toContain(key.split('_').slice(2).join('_'));
    expect(r.stdout).not.toContain(hashApiKey(key));
    expect(r.stdout).not.toMatch(/[0-9a-f]{64}/);
  });

  it('keys revoke PREFIX refuses the key at once; a second revoke fails', async () => {
    const key = lastLine(ri('keys', ['create', '--plan', 'enterprise'], env).stdout);
    const prefix = key.split('_')[1]!;
    expect(await store.authenticate(key)).not.toBeNull();
    const r = ri('keys', ['revoke', prefix], env);
    expect(r.status, r.stderr).toBe(0);
    expect(await store.authenticate(key)).toBeNull();
    const row = ri('keys', ['list'], env)
      .stdout.split('\n')
      .find((l) => l.startsWith(prefix));
    expect(row).toMatch(/\d{4}-\d\d-\d\dT\S+$/);
    const again = ri('keys', ['revoke', prefix], env);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/no active key with prefix/);
    expect(ri('keys', ['revoke', 'not-a-prefix'], env).status).toBe(2);
  });

  it('plans set EMAIL PLAN changes the plan every key of the account authenticates with', async () => {
    const email = `plans-${randomBytes(4).toString('hex')}@example.org`;
    const key = lastLine(ri('keys', ['create', '--plan', 'free', '--email', email], env).stdout);
    expect((await store.authenticate(key))?.plan).toBe('free');
    const r = ri('plans', ['set', email, 'PROFESSIONAL'], env);
    expect(r.status, r.stderr).toBe(0);
    expect((await store.authenticate(key))?.plan).toBe('professional');
    const missing = ri('plans', ['set', 'nobody@example.org', 'free'], env);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/^ri: no account with email nobody@example\.org\n$/);
    const badPlan = ri('plans', ['set', email, 'gold'], env);
    expect(badPlan.status).toBe(2);
    expect(badPlan.stderr).toMatch(/^ri: unknown plan 'gold'/);
  });
});

describe('ri keys / ri plans: usage errors', () => {
  const env: Env = { DATA_DIR: join(tmpdir(), 'ri-keys-cli-never-created') };

  it('prints usage on --help', () => {
    const keys = ri('keys', ['--help'], env);
    expect(keys.status).toBe(0);
    expect(keys.stdout).toContain('usage: ri keys create');
    const plans = ri('plans', ['--help'], env);
    expect(plans.status).toBe(0);
    expect(plans.stdout).toContain('usage: ri plans set');
  });

  it('reports bad arguments as one line with exit code 2, before touching the state store', () => {
    for (const [command, args, message] of [
      ['keys', ['create'], /needs --plan/],
      ['keys', ['create', '--plan', 'gold'], /unknown plan 'gold'/],
      ['keys', ['create', '--plan', 'free', '--email', 'nope'], /not an email address/],
      ['keys', ['frobnicate'], /unknown subcommand/],
      ['keys', ['list', '--plan', 'free'], /options of keys create/],
      ['keys', ['revoke'], /exactly one PREFIX/],
      ['keys', ['create', '--plna', 'free'], /Unknown option/],
      ['plans', ['set', 'a@example.org'], /needs EMAIL and PLAN/],
    ] as const) {
      const r = ri(command, [...args], env);
      expect(r.status, `${command} ${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(r.stdout).toBe('');
    }
    expect(existsSync(env.DATA_DIR!)).toBe(false);
  });

  it('reports a bad or unreachable STATE_URL as one line, without the password', () => {
    const bad = ri('keys', ['list'], { ...env, STATE_URL: 'mysql://u:secret@x/db' });
    expect(bad.status).toBe(1); // a bad configuration value (2 is for bad arguments)
    expect(bad.stderr).toMatch(/^ri: .*STATE_URL/);
    expect(bad.stderr.trimEnd().split('\n')).toHaveLength(1);
    const down = ri('keys', ['list'], { ...env, STATE_URL: 'postgres://u:secret@127.0.0.1:1/db' });
    expect(down.status).toBe(1);
    expect(down.stderr).toMatch(
      /^ri: cannot open the state store \(postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/db\): /,
    );
    expect(down.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(`${bad.stderr}${down.stderr}`).not.toContain('secret');
  });
});

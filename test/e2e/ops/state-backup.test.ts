import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStateStore } from '../../../src/access/open-state-store.js';
import { ri, riAsync, riBackground, stop } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

/** `ri state backup` and `ri state restore` over the real CLI, with a server running on the state file. */
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});

const mode = (path: string) => statSync(path).mode & 0o777;

async function serve(dataDir: string) {
  const server = riBackground(
    ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
    { STATE_URL: '' },
    /at (http:\/\/\S+)\/v1/,
  );
  cleanup.push(() => stop(server.child));
  return { base: (await server.started)[1]!, stop: () => stop(server.child) };
}

const call = (base: string, key: string) =>
  fetch(`${base}/v1/subjects/topic/T10030`, { headers: { authorization: `Bearer ${key}` } });

describe('ri state backup and restore (SQLite)', () => {
  it('backs up while ri serve answers keyed calls; the restored copy authenticates the keys and holds every row', async () => {
    const live = await sampleDataDir();
    const env = { DATA_DIR: live.dataDir, STATE_URL: '' };
    const createKey = (plan: string, email: string) => {
      const r = ri(['keys', 'create', '--plan', plan, '--email', email], env);
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.trim().split('\n').at(-1)!;
    };
    const keys = [createKey('personal', 'one@example.org'), createKey('professional', 'two@example.org')];
    // A ledger row, as a paid call writes it (pending, then settled).
    const store = await openStateStore(undefined, live.dataDir);
    const payment = {
      id: randomUUID(),
      operation: 'getElementHistory',
      resource: 'http://localhost/v1/elements/Fe/history',
      amount: '50000',
      network: 'eip155:84532',
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      payer: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      nonce: `0x70997970C51812dc3A010C7d01b50e0d17dc79C8:0x${randomBytes(32).toString('hex')}`,
      payloadHash: randomBytes(32).toString('hex'),
      validUntil: new Date(Date.now() + 300_000).toISOString(),
      dataVersion: null,
    };
    expect(await store.recordPayment(payment)).toBe(true);
    const transaction = `0x${randomBytes(32).toString('hex')}`;
    await store.finishPayment(payment.id, { status: 'settled', transaction });
    await store.close();

    const server = await serve(live.dataDir);
    // Keyed calls (each an authentication on the state file) all through the backup.
    const statuses: number[] = [];
    let calling = true;
    const caller = (async () => {
      for (let i = 0; calling; i++) statuses.push((await call(server.base, keys[i % 2]!)).status);
    })();
    while (statuses.length < 20) await new Promise((r) => setTimeout(r, 10));
    const file = join(tempDir('ri-backup-'), 'state-backup.sqlite');
    // A key created during the backup: a write by another process while the copy is taken.
    const callsBefore = statuses.length;
    const [backup, during] = await Promise.all([
      riAsync(['state', 'backup', file], env),
      riAsync(['keys', 'create', '--plan', 'personal', '--email', 'during@example.org'], env),
    ]);
    const callsAtBackup = statuses.length;
    expect(callsAtBackup).toBeGreaterThan(callsBefore);
    while (statuses.length < callsAtBackup + 20) await new Promise((r) => setTimeout(r, 10));
    calling = false;
    await caller;
    expect(backup.status, backup.stderr).toBe(0);
    expect(during.status, during.stderr).toBe(0);
    expect(backup.stderr).toMatch(/backed up .*state\.sqlite to .*state-backup\.sqlite \(0600\)/);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(mode(file)).toBe(0o600);
    expect(existsSync(`${file}-wal`)).toBe(false);

    // Never over an existing file: the backup's own name, a state file a server has open.
    const again = ri(['state', 'backup', file], env);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/exists: a backup never replaces a file/);
    const overLive = ri(['state', 'restore', file], env);
    expect(overLive.status).toBe(1);
    expect(overLive.stderr).toMatch(
      /state\.sqlite.* exists: restore writes only a state file that does not exist yet/,
    );

    // Restored into a fresh data directory, served there.
    const fresh = await sampleDataDir();
    const restored = ri(['state', 'restore', file, '--data-dir', fresh.dataDir], { STATE_URL: '' });
    expect(restored.status, restored.stderr).toBe(0);
    const statePath = join(fresh.dataDir, 'state.sqlite');
    expect(mode(statePath)).toBe(0o600);
    expect(ri(['state', 'restore', file, '--data-dir', fresh.dataDir], { STATE_URL: '' }).status).toBe(1);
    await server.stop();

    const copy = await serve(fresh.dataDir);
    for (const key of keys) expect((await call(copy.base, key)).status).toBe(200);
    const forged = `${keys[0]!.slice(0, -4)}zzzz`;
    expect((await call(copy.base, forged)).status).toBe(401);
    const freshEnv = { DATA_DIR: fresh.dataDir, STATE_URL: '' };
    const listed = ri(['keys', 'list'], freshEnv).stdout;
    for (const key of keys) expect(listed).toContain(key.split('_')[1]!);
    const payments = ri(['payments', 'list'], freshEnv);
    expect(payments.status).toBe(0);
    expect(payments.stdout.trim().split('\n')).toHaveLength(1);
    expect(payments.stdout.split('\t').slice(1, 7)).toEqual([
      'settled',
      'getElementHistory',
      '0.050000',
      'eip155:84532',
      payment.payer,
      transaction,
    ]);
  }, 90_000);

  it('refuses a file that is not a state backup, and a missing state file, with one line each', () => {
    const dir = tempDir('ri-backup-bad-');
    writeFileSync(join(dir, 'junk.sqlite'), 'not a database');
    const junk = ri(['state', 'restore', join(dir, 'junk.sqlite'), '--data-dir', join(dir, 'fresh')], {
      STATE_URL: '',
    });
    expect(junk.status).toBe(1);
    expect(junk.stderr).toMatch(/cannot be read as a state backup/);
    expect(existsSync(join(dir, 'fresh', 'state.sqlite'))).toBe(false);
    const none = ri(['state', 'backup', join(dir, 'b.sqlite'), '--data-dir', join(dir, 'empty')], {
      STATE_URL: '',
    });
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/no state file at .*empty\/state\.sqlite: nothing to back up/);
    expect(existsSync(join(dir, 'empty', 'state.sqlite'))).toBe(false);
    expect(ri(['state', 'backup'], { STATE_URL: '' }).status).toBe(2);
  });
});

describe('ri state on PostgreSQL', () => {
  const PG = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

  it('points at pg_dump and pg_restore (exit 1, no file written, no password shown)', () => {
    const dir = tempDir('ri-backup-pg-');
    const env = { STATE_URL: 'postgres://ri:hunter2secret@db.example:5432/ri?schema=ri_prod' };
    const backup = ri(['state', 'backup', join(dir, 'ri.dump')], env);
    expect(backup.status).toBe(1);
    expect(backup.stderr).toContain(
      `pg_dump --format=custom --schema=ri_prod --file=${join(dir, 'ri.dump')} postgres://ri@db.example:5432/ri`,
    );
    expect(backup.stderr).toContain('docs/operations.md');
    expect(backup.stderr).not.toContain('hunter2secret');
    expect(existsSync(join(dir, 'ri.dump'))).toBe(false);
    const restore = ri(['state', 'restore', join(dir, 'ri.dump')], env);
    expect(restore.status).toBe(1);
    expect(restore.stderr).toContain(
      `pg_restore --clean --if-exists --dbname=postgres://ri@db.example:5432/ri ${join(dir, 'ri.dump')}`,
    );
  });

  const hasPgTools = ['pg_dump', 'pg_restore'].every((t) => spawnSync(t, ['--version']).status === 0);
  it.skipIf(!hasPgTools)(
    'the printed pg_dump and pg_restore commands bring a dropped schema back',
    async () => {
      const schema = `ri_dump_${randomBytes(4).toString('hex')}`;
      const env = { STATE_URL: `${PG}?schema=${schema}` };
      const admin = new pg.Client({ connectionString: PG });
      await admin.connect();
      cleanup.push(async () => {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      });
      const created = ri(['keys', 'create', '--plan', 'personal', '--email', 'pg@example.org'], env);
      expect(created.status, created.stderr).toBe(0);
      const prefix = created.stdout.trim().split('\n').at(-1)!.split('_')[1]!;
      const dump = join(tempDir('ri-pgdump-'), 'ri.dump');
      const run = (sub: string) => {
        const advice = ri(['state', sub, dump], env).stderr.split('\n')[1]!.trim();
        const [tool, ...args] = advice.split(' ');
        const r = spawnSync(tool!, args, { encoding: 'utf8' });
        expect(r.status, r.stderr).toBe(0);
      };
      run('backup');
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      run('restore');
      expect(ri(['keys', 'list'], env).stdout).toContain(prefix);
    },
  );
});

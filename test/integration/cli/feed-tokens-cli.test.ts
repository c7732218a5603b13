import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStateStore } from '../../../src/access/open-state-store.js';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { dataPaths } from '../../../src/config/paths.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { firstPublication, ingestAndBuild } from '../../helpers/changes-corpus.js';
import { riAsync } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/works.js';

/**
 * `ri feed-tokens` through the built CLI (dist), on the embedded SQLite state store of a data
 * folder that a server in this process serves: create prints the token alone on the last line,
 * list shows prefixes and never the token, and the token opens a topic's feed (Personal) over
 * HTTP until `ri feed-tokens revoke` refuses it, at once, though the response cache holds it.
 */
const TOKEN = /^rif_([a-z0-9]{8})_[A-Za-z0-9_-]{43}$/;
const env: Record<string, string> = {};
let manager: SnapshotManager;
let state: StateStore;
let server: RunningServer;

const ri = (args: string[]) => riAsync(args, env);

async function account(plan: string, email: string) {
  const r = await ri(['keys', 'create', '--plan', plan, '--email', email]);
  expect(r.status, r.stderr).toBe(0);
}

async function feed(token: string) {
  const res = await fetch(`${server.url}/v1/feeds/subjects/topic/T200?token=${token}`);
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    timing: res.headers.get('server-timing'),
    text: await res.text(),
  };
}

beforeAll(async () => {
  const dataDir = tempDir('ri-feed-tokens-cli-');
  env.DATA_DIR = dataDir;
  const paths = dataPaths(dataDir);
  await ingestAndBuild(dataDir, paths.snapshots, firstPublication());
  manager = new SnapshotManager(paths.snapshots);
  await manager.start(50);
  await account('personal', 'cli-feeds@example.org');
  await account('free', 'cli-feeds-free@example.org');
  state = await openStateStore(undefined, dataDir);
  await state.migrate();
  server = await startServer(
    loadConfig({ PORT: '0', HOST: '127.0.0.1', WORKER_THREADS: '0', RATE_LIMIT_PER_IP: '1000000' }),
    manager,
    state,
    () => {},
  );
}, 120_000);

afterAll(async () => {
  await server?.close();
  manager?.stop();
  await state?.close();
});

describe('ri feed-tokens', () => {
  it('creates (the token once, on the last line), lists without it, opens a feed until revoked', async () => {
    const made = await ri(['feed-tokens', 'create', '--email', 'cli-feeds@example.org']);
    expect(made.status, made.stderr).toBe(0);
    const token = made.stdout.trim().split('\n').at(-1)!;
    const prefix = TOKEN.exec(token)![1]!;
    expect(made.stderr).toContain(`created feed token ${prefix} for cli-feeds@example.org (plan personal)`);
    expect(made.stderr).not.toContain(token);

    const listed = await ri(['feed-tokens', 'list', '--email', 'cli-feeds@example.org']);
    expect(listed.status, listed.stderr).toBe(0);
    const [header, row, more] = listed.stdout.trim().split('\n');
    expect(header).toMatch(/^PREFIX\s+ACCOUNT\s+PLAN\s+CREATED\s+REVOKED$/);
    expect(row).toMatch(new RegExp(`^${prefix}\\s+\\S+\\s+personal\\s+\\d{4}-\\d\\d-\\d\\dT\\S+\\s+-$`));
    expect(more).toBeUndefined();
    expect(listed.stdout).not.toContain(token.slice(`rif_${prefix}_`.length));
    // Only its hash is stored.
    expect(JSON.stringify(await state.listFeedTokens())).not.toContain(token);

    const opened = await feed(token);
    expect([opened.status, opened.type]).toEqual([200, expect.stringContaining('application/atom+xml')]);
    expect(opened.text).toContain('<feed');
    // Asked again: the response cache's answer, which a revocation must reach all the same.
    expect(await feed(token)).toMatchObject({
      status: 200,
      timing: expect.stringContaining('cache;desc=hit'),
    });

    const revoked = await ri(['feed-tokens', 'revoke', prefix]);
    expect([revoked.status, revoked.stderr]).toEqual([0, `revoked feed token ${prefix}\n`]);
    const refused = await feed(token);
    expect([refused.status, JSON.parse(refused.text).code]).toEqual([401, 'invalid_feed_token']);
    expect((await ri(['feed-tokens', 'list'])).stdout).toMatch(
      new RegExp(`^${prefix}\\s+.*personal\\s+\\S+\\s+\\d{4}-\\d\\d-\\d\\dT\\S+$`, 'm'),
    );
    const again = await ri(['feed-tokens', 'revoke', prefix]);
    expect([again.status, again.stderr]).toEqual([1, `ri: no active feed token with prefix ${prefix}\n`]);
  });

  it("answers a token as its account's plan: a free account's is refused a topic's feed", async () => {
    const made = await ri(['feed-tokens', 'create', '--email', 'cli-feeds-free@example.org']);
    expect(made.status, made.stderr).toBe(0);
    const refused = await feed(made.stdout.trim().split('\n').at(-1)!);
    expect([refused.status, JSON.parse(refused.text).code]).toEqual([403, 'plan_required']);
  });

  it('says what is wrong: no account, the command line (exit 2)', async () => {
    const none = await ri(['feed-tokens', 'create', '--email', 'nobody@example.org']);
    expect([none.status, none.stderr]).toEqual([1, 'ri: no account with email nobody@example.org\n']);
    expect((await ri(['feed-tokens', 'list', '--email', 'nobody@example.org'])).status).toBe(1);
    expect((await ri(['feed-tokens'])).status).toBe(2);
    expect((await ri(['feed-tokens', 'create'])).status).toBe(2);
    expect((await ri(['feed-tokens', 'revoke'])).status).toBe(2);
    expect((await ri(['feed-tokens', 'revoke', 'rif_x'])).stderr).toMatch(/not a feed token prefix/);
    expect((await ri(['feed-tokens', 'revoke', 'abcd1234', '--email', 'a@example.org'])).status).toBe(2);
    expect((await ri(['feed-tokens', 'frobnicate'])).stderr).toMatch(/expected create, list or revoke/);
  });
});

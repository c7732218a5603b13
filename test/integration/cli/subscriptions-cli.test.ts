import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riAsync } from '../../helpers/cli.js';
import { verified, webhookReceiver } from '../../helpers/webhook-receiver.js';
import { tempDir } from '../../helpers/works.js';

/**
 * `ri subscriptions` through the built CLI (dist), on the embedded SQLite state store: create
 * prints the secret alone on the last line, list, test (a delivery the receiver verifies with
 * standardwebhooks), delete, and the refusals by their stable codes.
 */
let receiver: Awaited<ReturnType<typeof webhookReceiver>>;
const env: Record<string, string> = {};

const ri = (args: string[]) => riAsync(args, env);
async function account(plan: string, email: string) {
  const r = await ri(['keys', 'create', '--plan', plan, '--email', email]);
  expect(r.status, r.stderr).toBe(0);
}
const create = (email: string, url: string, subjects = 'element/Fe', more: string[] = []) =>
  ri(['subscriptions', 'create', '--email', email, '--url', url, '--subjects', subjects, ...more]);

beforeAll(async () => {
  receiver = await webhookReceiver();
  Object.assign(env, {
    DATA_DIR: tempDir('ri-subs-cli-'),
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  await account('personal', 'cli-hooks@example.org');
  await account('free', 'cli-free@example.org');
}, 60_000);

afterAll(async () => {
  await receiver?.close();
});

describe('ri subscriptions', () => {
  it('creates (the secret once, on the last line), lists, test-sends and deletes', async () => {
    const made = await create('cli-hooks@example.org', `${receiver.base}/hook`, 'element/fe,topic/T10074', [
      '--min-move',
      '2.5',
    ]);
    expect(made.status, made.stderr).toBe(0);
    const secret = made.stdout.trim().split('\n').at(-1)!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = /created subscription (whs_[0-9a-f]{12}) \(element\/Fe, topic\/T10074, least move 2\.5\)/.exec(
      made.stderr,
    )![1]!;

    const listed = await ri(['subscriptions', 'list', '--email', 'cli-hooks@example.org']);
    expect(listed.status).toBe(0);
    const [header, row] = listed.stdout.trim().split('\n');
    expect(header).toMatch(/^ID\s+ACCOUNT\s+PLAN\s+MIN_MOVE\s+CREATED\s+URL\s+SUBJECTS$/);
    expect(row).toContain(id);
    expect(row).toContain(`${receiver.base}/hook`);
    expect(row).toMatch(/personal\s+2\.5\s/);
    expect(listed.stdout).not.toContain(secret);

    const sent = await ri(['subscriptions', 'test', id]);
    expect(sent.status, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/^delivered msg_test_[0-9a-f]+: HTTP 200$/m);
    const got = receiver.at('/hook');
    expect(got).toHaveLength(1);
    expect(verified(secret, got[0]!)).toMatchObject({ type: 'webhook.test', data: { subscription_id: id } });

    expect((await ri(['subscriptions', 'delete', id])).status).toBe(0);
    expect((await ri(['subscriptions', 'list'])).stdout).not.toContain(id);
    const again = await ri(['subscriptions', 'delete', id]);
    expect([again.status, again.stderr]).toEqual([1, expect.stringContaining('unknown_subscription')]);
  });

  it('refuses by stable code: private and metadata addresses, plain http, the plan, its limit', async () => {
    const email = 'cli-hooks@example.org';
    for (const url of ['https://10.0.0.1/hook', 'https://169.254.169.254/', 'http://93.184.215.14/hook']) {
      const r = await create(email, url);
      expect([url, r.status, r.stderr]).toEqual([url, 1, expect.stringContaining('webhook_url_refused')]);
    }
    const free = await create('cli-free@example.org', `${receiver.base}/free`);
    expect([free.status, free.stderr]).toEqual([1, expect.stringContaining('plan_required')]);
    const bad = await create(email, `${receiver.base}/bad`, 'element/Qq');
    expect([bad.status, bad.stderr]).toEqual([1, expect.stringContaining('unknown_symbol')]);
    // Personal holds 3.
    for (let i = 0; i < 3; i++) expect((await create(email, `${receiver.base}/n${i}`)).status).toBe(0);
    const over = await create(email, `${receiver.base}/n3`);
    expect([over.status, over.stderr]).toEqual([1, expect.stringContaining('subscription_limit')]);
  });

  it('says what is wrong with the command line (exit 2)', async () => {
    expect((await ri(['subscriptions'])).status).toBe(2);
    expect((await ri(['subscriptions', 'create', '--email', 'x@example.org'])).status).toBe(2);
    expect((await ri(['subscriptions', 'delete'])).status).toBe(2);
    expect((await ri(['subscriptions', 'frobnicate'])).stderr).toMatch(
      /expected create, list, delete or test/,
    );
  });
});

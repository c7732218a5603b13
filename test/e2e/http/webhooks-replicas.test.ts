import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COPPER,
  firstPublication,
  ingestAndBuild,
  LEARNING,
  many,
  NICKEL,
  paper,
} from '../../helpers/changes-corpus.js';
import { riAsync, type riBackground, serveReplicas, stop, until } from '../../helpers/cli.js';
import { verified, webhookReceiver } from '../../helpers/webhook-receiver.js';
import { tempDir } from '../../helpers/works.js';

/**
 * Two `ri serve` processes share one PostgreSQL state store and one data folder: at a
 * publication both notice it and both make its webhook events, and each event is delivered
 * once (the outbox keeps it once by its id, and one replica claims it), verified by the
 * receiver with the Standard Webhooks reference library. A 500 is retried, by whichever
 * replica claims it next, still once delivered.
 */
const PG = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `ri_e2e_hooks_${randomBytes(4).toString('hex')}`;
const env: Record<string, string> = {};
const servers: ReturnType<typeof riBackground>[] = [];
const bases: string[] = [];
let dataDir: string;
let receiver: Awaited<ReturnType<typeof webhookReceiver>>;
let A: string;
const EMAIL = 'replica-hooks@example.org';
const SUBJECTS = ['element/Ni', 'element/Cu', 'element/Fe', 'topic/T200', 'topic/T400'];

async function ri(args: string[]) {
  const r = await riAsync(args, env);
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim().split('\n').at(-1)!;
}

beforeAll(async () => {
  dataDir = tempDir('ri-hooks-replicas-');
  A = (await ingestAndBuild(dataDir, join(dataDir, 'snapshots'), firstPublication())).version;
  receiver = await webhookReceiver({ '/flaky': (n) => (n === 0 ? 500 : 200) });
  Object.assign(env, {
    DATA_DIR: dataDir,
    STATE_URL: `${PG}?schema=${schema}`,
    REDIS_URL: 'redis://127.0.0.1:6379',
    WORKER_THREADS: '0',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_POLL_MS: '20',
    WEBHOOK_RETRY_BASE_MS: '100',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  await ri(['keys', 'create', '--plan', 'professional', '--email', EMAIL]);
  await serveReplicas(2, env, servers, bases);
}, 120_000);

afterAll(async () => {
  for (const s of servers) await stop(s.child);
  await receiver?.close();
  const client = new pg.Client({ connectionString: PG });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
});

describe('webhooks with two replicas on PostgreSQL', () => {
  it('deliver each event of a publication once', async () => {
    const subjects = SUBJECTS.join(',');
    const secret = await ri([
      'subscriptions',
      'create',
      '--email',
      EMAIL,
      '--url',
      `${receiver.base}/ok`,
      '--subjects',
      subjects,
    ]);
    const flakySecret = await ri([
      'subscriptions',
      'create',
      '--email',
      EMAIL,
      '--url',
      `${receiver.base}/flaky`,
      '--subjects',
      'element/Ni',
    ]);
    const key = await ri(['keys', 'create', '--plan', 'professional', '--email', EMAIL]);
    const B = (
      await ingestAndBuild(dataDir, join(dataDir, 'snapshots'), [
        ...many(3, 'Nickel electrodes for batteries', NICKEL, '2025-07-01'),
        ...many(4, 'Machine learning for materials discovery', LEARNING, '2025-08-01'),
        paper('Copper wires in circuits', COPPER, '2025-11-20'),
      ])
    ).version;
    // Both replicas serve B.
    for (const base of bases)
      await until(
        async () =>
          ((await (await fetch(`${base}/v1/versions`)).json()) as { data_version: string }).data_version ===
            B || undefined,
      );
    // What the subscription's subjects moved, as the API answers: the events expected.
    let expected = 0;
    for (const s of SUBJECTS) {
      const [type, id] = s.split('/');
      const path = type === 'element' ? `/v1/elements/${id}/changes` : `/v1/subjects/${type}/${id}/changes`;
      const res = await fetch(`${bases[0]}${path}?since=${A}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expected += ((await res.json()) as { changes: unknown[] }).changes.length;
    }
    expect(expected).toBeGreaterThanOrEqual(3);
    await until(
      () => (receiver.at('/ok').length >= expected && receiver.at('/flaky').length >= 2) || undefined,
      30_000,
    );
    // Time for a duplicate from the other replica to arrive.
    await new Promise((r) => setTimeout(r, 2000));
    const ok = receiver.at('/ok');
    expect(ok).toHaveLength(expected);
    expect(new Set(ok.map((r) => r.id)).size).toBe(expected);
    const bodies = ok.map((r) => verified(secret, r));
    expect(bodies.every((b) => (b.data.data_version as { after: string }).after === B)).toBe(true);
    expect(new Set(bodies.map((b) => JSON.stringify(b.data.subject))).size).toBe(expected);
    const flaky = receiver.at('/flaky');
    expect(flaky).toHaveLength(2);
    expect(flaky[1]!.id).toBe(flaky[0]!.id);
    for (const r of flaky) expect(verified(flakySecret, r).type).toBe('subject.changed');
  }, 120_000);
});

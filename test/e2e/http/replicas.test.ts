import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riAsync, type riBackground, serveReplicas, stop, until } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';

/**
 * Two `ri serve` processes on two ports share one PostgreSQL state store and one Redis: a key
 * created or revoked is honoured by both at once, and the rate limit of a key is one budget.
 */
const PG = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `ri_e2e_${randomBytes(4).toString('hex')}`;
const env: Record<string, string> = {};
const servers: ReturnType<typeof riBackground>[] = [];
const bases: string[] = [];

beforeAll(async () => {
  const sample = await sampleDataDir();
  Object.assign(env, {
    DATA_DIR: sample.dataDir,
    STATE_URL: `${PG}?schema=${schema}`,
    REDIS_URL: 'redis://127.0.0.1:6379',
    RATE_LIMIT_PER_KEY: '6',
    LOG_LEVEL: 'info',
  });
  await serveReplicas(2, env, servers, bases);
}, 120_000);

afterAll(async () => {
  for (const s of servers) await stop(s.child);
  const client = new pg.Client({ connectionString: PG });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
});

const call = (base: string, key: string) =>
  fetch(`${base}/v1/subjects/topic/T10030`, { headers: { authorization: `Bearer ${key}` } });

// The CLI runs beside the test's event loop (riAsync), never blocking it: a blocked loop misses
// the replicas closing idle keep-alive sockets, and its next fetch on one fails ("other side
// closed") on a loaded machine.
async function createKey(plan: string, email: string): Promise<string> {
  const r = await riAsync(['keys', 'create', '--plan', plan, '--email', email], env);
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim().split('\n').at(-1)!;
}

describe('two replicas sharing PostgreSQL and Redis', () => {
  it('honour a new key on both at once, and a revocation on both at once', async () => {
    const key = await createKey('personal', 'replica@example.org');
    expect((await call(bases[0]!, key)).status).toBe(200);
    expect((await call(bases[1]!, key)).status).toBe(200);
    const prefix = key.split('_')[1]!;
    const revoke = await riAsync(['keys', 'revoke', prefix], env);
    expect(revoke.status, revoke.stderr).toBe(0);
    for (const base of bases) {
      const res = await call(base, key);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('invalid_key');
    }
  });

  it('see a plan change on both at once', async () => {
    const key = await createKey('free', 'upgrade@example.org');
    expect((await call(bases[1]!, key)).status).toBe(403);
    expect((await riAsync(['plans', 'set', 'upgrade@example.org', 'personal'], env)).status).toBe(0);
    expect((await call(bases[0]!, key)).status).toBe(200);
    expect((await call(bases[1]!, key)).status).toBe(200);
  });

  it('share one rate-limit budget per key', async () => {
    const key = await createKey('personal', 'limits@example.org');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call(bases[i % 2]!, key)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    const over = await call(bases[0]!, key);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await over.json()) as { code: string; detail: string };
    expect(body.code).toBe('rate_limited');
    expect(body.detail).toMatch(/per-key limit is 6 requests per 60 s/);
    expect((await call(bases[1]!, key)).status).toBe(429);
  });

  it('run a lab quote issued by one replica on the other (quotes and the signing secret are shared)', async () => {
    const key = await createKey('professional', 'lab@example.org');
    const auth = { headers: { authorization: `Bearer ${key}` } };
    const quote = (await (await fetch(`${bases[0]}/v1/lab/quote?q=Ni%20Fe`, auth)).json()) as Record<
      string,
      unknown
    >;
    expect(quote.quote_id).toEqual(expect.any(String));
    const byId = await fetch(`${bases[1]}/v1/lab/run?quote_id=${quote.quote_id}&depth=papers_20`, auth);
    expect(byId.status).toBe(200);
    const byBody = await fetch(`${bases[1]}/v1/lab/run`, {
      method: 'POST',
      headers: { ...auth.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ quote, depth: 'papers_20' }),
    });
    expect(byBody.status).toBe(200);
  });

  it('log each request as JSON with the key prefix, never the key', async () => {
    const key = await createKey('personal', 'logs@example.org');
    expect((await call(bases[0]!, key)).status).toBe(200);
    const prefix = key.split('_')[1]!;
    // Log lines are written asynchronously: wait for them.
    const requests = await until(() => {
      const found = servers[0]!
        .output()
        .stdout.split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.msg === 'request');
      return found.some((l) => l.key_prefix === prefix) ? found : undefined;
    }, 5_000);
    expect(
      requests.some((l) => l.key_prefix === prefix && l.route === '/v1/subjects/:subject_type/:subject_id'),
    ).toBe(true);
    expect(servers[0]!.output().stdout).not.toContain(key.split('_').slice(2).join('_'));
  });
});

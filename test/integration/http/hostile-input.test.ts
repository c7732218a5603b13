import { createHash, randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLAN_RATE_LIMITS } from '../../../src/access/policy.js';
import { RedisRateLimiter } from '../../../src/access/rate-limiter.js';
import { loadConfig } from '../../../src/config/config.js';
import { createApp } from '../../../src/http/app.js';
import { ipAllowed } from '../../../src/util/ip-ranges.js';
import { bearer, sampleApp } from '../../helpers/app.js';

type Ctx = Awaited<ReturnType<typeof sampleApp>>;
let ctx: Ctx;

beforeAll(async () => {
  ctx = await sampleApp();
}, 120_000);

afterAll(async () => {
  await ctx?.close();
});

const pro = () => bearer(ctx.keys.professional);

describe('input that once answered 500', () => {
  it('a question word that is also an object property (constructor, __proto__) is just a word', async () => {
    for (const q of [
      'q=constructor',
      'paper=constructor',
      'q=__proto__%20constructor%20toString',
      'q=hasOwnProperty',
    ]) {
      const res = await ctx.app.request(`/v1/research?${q}`, pro());
      expect([q, res.status < 500]).toEqual([q, true]);
      expect([200, 404]).toContain(res.status);
    }
  });

  it('a raw %, %25 or invalid UTF-8 in a subject id is an unknown subject (decoded once, never twice)', async () => {
    for (const id of ['%', '%25', '%ff', '%25ff', '%E0%A4%A']) {
      const res = await ctx.app.request(`/v1/subjects/keyword/${id}`, pro());
      expect([id, res.status]).toEqual([id, 404]);
      expect(((await res.json()) as { code: string }).code).toBe('unknown_subject');
    }
  });

  it('a quote nested 5,000 deep is refused as edited, not a stack overflow', async () => {
    const nested = `${'{"a":'.repeat(5000)}"x"${'}'.repeat(5000)}`;
    const res = await ctx.app.request('/v1/lab/run', {
      method: 'POST',
      headers: { ...pro().headers, 'content-type': 'application/json' },
      body: `{"quote":{"signature":"x","deep":${nested}},"depth":"papers_20"}`,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('quote_edited');
  });

  it('HEAD /v1/lab/quote computes the quote but does not store it', async () => {
    const count = () => {
      const db = new Database(ctx.statePath, { readonly: true });
      try {
        return db.prepare('SELECT count(*) FROM quotes').pluck().get() as number;
      } finally {
        db.close();
      }
    };
    const before = count();
    const head = await ctx.app.request('/v1/lab/quote?q=Co%20Mn', { ...pro(), method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(count()).toBe(before);
    expect((await ctx.app.request('/v1/lab/quote?q=Co%20Mn', pro())).status).toBe(200);
    expect(count()).toBe(before + 1);
  });

  it('keeps the state file (key hashes, ledger, quote secret) readable by its owner only', () => {
    for (const file of [ctx.statePath, `${ctx.statePath}-wal`])
      expect([file, statSync(file).mode & 0o777]).toEqual([file, 0o600]);
  });
});

describe('the response cache', () => {
  it('keeps one copy of an answer whatever the Host header says', async () => {
    for (let i = 0; i < 150; i++) {
      const res = await ctx.app.request(`http://host-${i}.example/v1/elements/Fe`, pro());
      expect(res.status).toBe(200);
    }
    const snapshot = ctx.snapshots.acquire()!;
    try {
      const store = snapshot.memo.get('response-cache') as { entries: Map<string, unknown>; bytes: number };
      const keys = [...store.entries.keys()].filter((k) => k.endsWith('/v1/elements/Fe'));
      expect(keys).toEqual([`${snapshot.version}|professional|/v1/elements/Fe`]);
      expect(store.bytes).toBe(
        // Each entry counts its identity, gzip and Brotli bytes.
        [...store.entries.values()].reduce((sum: number, e) => sum + (e as { bytes: number }).bytes, 0),
      );
    } finally {
      snapshot.release();
    }
  });
});

describe('/metrics', () => {
  const fromIp = (ip: string) => ({ incoming: { socket: { remoteAddress: ip } } });

  it('answers loopback and METRICS_ALLOW only, judged on the socket (not X-Forwarded-For)', async () => {
    const allowed = await sampleApp({ METRICS_ALLOW: ['10.1.0.0/16', '192.0.2.7'] });
    const forged = { headers: { 'x-forwarded-for': '127.0.0.1' } };
    for (const [ip, status] of [
      ['127.0.0.1', 200],
      ['::1', 200],
      ['::ffff:127.0.0.1', 200],
      ['10.1.200.3', 200],
      ['192.0.2.7', 200],
      ['10.2.0.1', 404],
      ['203.0.113.9', 404],
    ] as const) {
      const res = await allowed.app.request('/metrics', forged, fromIp(ip));
      expect([ip, res.status]).toEqual([ip, status]);
    }
    await allowed.close();
  });

  it('ipAllowed: exact addresses and IPv4 ranges', () => {
    expect(ipAllowed('10.0.0.5', ['10.0.0.0/8'])).toBe(true);
    expect(ipAllowed('11.0.0.5', ['10.0.0.0/8'])).toBe(false);
    expect(ipAllowed('2001:db8::1', ['2001:db8::1'])).toBe(true);
    expect(ipAllowed('2001:db8::2', ['10.0.0.0/0'])).toBe(false);
    expect(ipAllowed('8.8.8.8', ['0.0.0.0/0'])).toBe(true);
    expect(ipAllowed('999.1.1.1', ['0.0.0.0/0'])).toBe(false);
  });
});

describe('rate limit headers', () => {
  it('are on keyless answers too (the per-IP budget), cached ones included', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await ctx.app.request(
        '/v1/elements/Fe',
        {},
        { incoming: { socket: { remoteAddress: '198.51.100.7' } } },
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('"per-ip";q=120;w=60');
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"per-ip";r=${119 - i};t=\\d+$`));
    }
  });
});

describe('/readyz with Redis away', () => {
  it('says degraded (limits held per process) while the app keeps answering', async () => {
    const limiter = new RedisRateLimiter('redis://127.0.0.1:1');
    const app = createApp({
      config: loadConfig({}),
      snapshots: ctx.snapshots,
      state: ctx.state,
      rateLimiter: limiter,
    });
    try {
      const res = await app.request('/readyz');
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        ready: true,
        status: 'degraded',
        rate_limits: expect.stringMatching(/Redis unreachable/),
      });
      expect((await app.request('/v1/elements/Fe')).status).toBe(200);
    } finally {
      await limiter.close();
    }
  });
});

describe('invalid keys', () => {
  it('count against the address: past its budget, 429 without another state-store lookup', async () => {
    const app = await sampleApp({ RATE_LIMIT_PER_IP: 3 });
    let lookups = 0;
    const real = app.state.authenticate.bind(app.state);
    app.state.authenticate = (key: string) => {
      lookups++;
      return real(key);
    };
    const from = { incoming: { socket: { remoteAddress: '203.0.113.50' } } };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await app.app.request(
        '/v1/elements/Fe',
        { headers: { authorization: `Bearer ri_bad${i}` } },
        from,
      );
      statuses.push(res.status);
      if (res.status === 429) {
        expect(((await res.json()) as { code: string }).code).toBe('rate_limited');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    expect(lookups).toBe(4);
    // Another address is not affected, and a valid key from any address still works.
    const other = { incoming: { socket: { remoteAddress: '203.0.113.51' } } };
    expect(
      (await app.app.request('/v1/elements/Fe', { headers: { authorization: 'Bearer ri_nope' } }, other))
        .status,
    ).toBe(401);
    expect((await app.app.request('/v1/elements/Fe', bearer(app.keys.free), other)).status).toBe(200);
    await app.close();
  });
});

describe('invalid keys from an address a valid key shares', () => {
  /** A well-formed key no store holds: it costs a lookup to tell from a valid one. */
  const unknownKey = () => `ri_zzzzzzzz_${randomBytes(32).toString('base64url')}`;

  it('never refuse a valid key, even one never seen before; unknown keys from it stay 429', async () => {
    const app = await sampleApp({ RATE_LIMIT_PER_IP: 3 });
    let lookups = 0;
    const real = app.state.authenticate.bind(app.state);
    app.state.authenticate = (key: string) => {
      lookups++;
      return real(key);
    };
    const from = { incoming: { socket: { remoteAddress: '203.0.113.60' } } };
    const send = async (key: string) =>
      (await app.app.request('/v1/elements/Fe', { headers: { authorization: `Bearer ${key}` } }, from))
        .status;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push(await send(unknownKey()));
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    // A neighbour behind the same address, with a key this process has not seen yet.
    expect(await send(app.keys.personal)).toBe(200);
    expect(await send(app.keys.personal)).toBe(200);
    expect(await send(app.keys.enterprise)).toBe(200);
    // The valid keys did not lift the block: unknown keys are still refused, a malformed one
    // (it can never be valid) without a lookup.
    expect(await send(unknownKey())).toBe(429);
    const before = lookups;
    expect(await send('ri_bad')).toBe(429);
    expect(lookups).toBe(before);
    await app.close();
  });

  it('an address over its budget has one key lookup at a time, however many it sends at once', async () => {
    const app = await sampleApp({ RATE_LIMIT_PER_IP: 2 });
    let inFlight = 0;
    let most = 0;
    const real = app.state.authenticate.bind(app.state);
    app.state.authenticate = async (key: string) => {
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        await new Promise((r) => setImmediate(r)); // as a network round trip would
        return await real(key);
      } finally {
        inFlight--;
      }
    };
    const from = { incoming: { socket: { remoteAddress: '203.0.113.61' } } };
    const send = async (key: string) =>
      (await app.app.request('/v1/elements/Fe', { headers: { authorization: `Bearer ${key}` } }, from))
        .status;
    for (let i = 0; i < 3; i++) await send(unknownKey());
    most = 0;
    const statuses = await Promise.all([
      ...Array.from({ length: 10 }, () => send(unknownKey())),
      send(app.keys.free),
    ]);
    expect(statuses).toEqual([...Array(10).fill(429), 200]);
    expect(most).toBe(1);
    await app.close();
  });
});

describe('invalid keys from an address, with the state store stalled', () => {
  it('a lookup waiting its turn answers 503 state_unavailable within the deadline, not a hang', async () => {
    const app = await sampleApp({ RATE_LIMIT_PER_IP: 1, STATE_TIMEOUT_MS: 50 });
    const from = { incoming: { socket: { remoteAddress: '203.0.113.62' } } };
    const send = (key: string) =>
      app.app.request('/v1/elements/Fe', { headers: { authorization: `Bearer ${key}` } }, from);
    const unknownKey = () => `ri_zzzzzzzz_${randomBytes(32).toString('base64url')}`;
    expect([(await send(unknownKey())).status, (await send(unknownKey())).status]).toEqual([401, 429]);
    const real = app.state.authenticate.bind(app.state);
    let release = () => {};
    const stalled = new Promise<void>((r) => {
      release = r;
    });
    app.state.authenticate = async (key: string) => {
      await stalled;
      return real(key);
    };
    const first = send(unknownKey());
    const queued = await send(app.keys.free);
    expect(queued.status).toBe(503);
    expect(((await queued.json()) as { code: string }).code).toBe('state_unavailable');
    expect(queued.headers.get('retry-after')).toMatch(/^\d+$/);
    release();
    expect((await first).status).toBe(429);
    await app.close();
  });
});

describe('secrets', () => {
  it('the SQLite login cache is keyed by the hash of a key, never the key', async () => {
    expect((await ctx.app.request('/v1/elements/Fe/history', bearer(ctx.keys.free))).status).toBe(200);
    const lookups = (ctx.state as unknown as { lookups: Map<string, unknown> }).lookups;
    expect([...lookups.keys()]).not.toContain(ctx.keys.free);
    expect([...lookups.keys()]).toContain(createHash('sha256').update(ctx.keys.free).digest('hex'));
  });
});

describe('per-plan rate limits', () => {
  it("each key's budget comes from its plan in the access table", async () => {
    for (const [plan, q] of [
      ['free', PLAN_RATE_LIMITS.free],
      ['personal', PLAN_RATE_LIMITS.personal],
      ['professional', PLAN_RATE_LIMITS.professional],
    ] as const) {
      const res = await ctx.app.request('/v1/elements/Fe', bearer(ctx.keys[plan]));
      expect([plan, res.headers.get('ratelimit-policy')]).toEqual([plan, `"per-key";q=${q};w=60`]);
    }
    expect(PLAN_RATE_LIMITS.free).toBeLessThan(PLAN_RATE_LIMITS.personal);
    expect(PLAN_RATE_LIMITS.personal).toBeLessThan(PLAN_RATE_LIMITS.professional);
  });
});

describe('over-long URLs', () => {
  it('answer 414 uri_too_long as problem+json', async () => {
    const res = await ctx.app.request(`/v1/subjects/search?q=${'a'.repeat(9000)}`, pro());
    expect(res.status).toBe(414);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(((await res.json()) as { code: string }).code).toBe('uri_too_long');
    expect((await ctx.app.request(`/v1/subjects/search?q=${'a'.repeat(150)}`, pro())).status).toBe(200);
  });
});

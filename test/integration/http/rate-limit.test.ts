import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createRateLimiter,
  MemoryRateLimiter,
  type RateLimiter,
  RedisRateLimiter,
} from '../../../src/access/rate-limiter.js';
import { middlewareChain } from '../../../src/http/middleware.js';
import { handleError } from '../../../src/http/problem.js';
import { clientIp, type RateLimitPolicy, rateLimitMiddleware } from '../../../src/http/rate-limit.js';

const REDIS_URL = 'redis://127.0.0.1:6379';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A tiny app: request id, an auth stand-in that sets apiKeyPrefix from `x-key`, the limiter. */
function tinyApp(limiter: RateLimiter, policy: Partial<RateLimitPolicy>) {
  const app = new Hono<{ Variables: { requestId: string; apiKeyPrefix: string | undefined } }>();
  app.use('*', async (c, next) => {
    c.set('requestId', 'req-1');
    c.set('apiKeyPrefix', c.req.header('x-key'));
    await next();
  });
  // A 429 is thrown by the middleware and answered by the chain's error handler, as in the app.
  app.use(
    '*',
    middlewareChain([rateLimitMiddleware(limiter, policy)], (e, c) => handleError(e, c, () => {})),
  );
  app.get('/v1/things', (c) => c.json({ ok: true }));
  app.get('/v1/boom', () => {
    throw new Error('boom');
  });
  app.onError((_e, c) => c.json({ error: true }, 500));
  return app;
}

const fromIp = (ip: string) => ({ incoming: { socket: { remoteAddress: ip } } });

describe('MemoryRateLimiter', () => {
  it('counts up to the limit, refuses past it, and resets when the window ends', async () => {
    let now = 1_000_000;
    const limiter = new MemoryRateLimiter({ now: () => now });
    const a = await limiter.hit('b', 3, 2);
    expect(a).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 2 });
    await limiter.hit('b', 3, 2);
    expect((await limiter.hit('b', 3, 2)).remaining).toBe(0);
    const refused = await limiter.hit('b', 3, 2);
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    now += 1_500;
    expect((await limiter.hit('b', 3, 2)).resetSeconds).toBe(1);
    // Another bucket has its own budget.
    expect((await limiter.hit('other', 3, 2)).allowed).toBe(true);
    now += 600;
    expect(await limiter.hit('b', 3, 2)).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 2 });
  });

  it('without a clock given, counts windows on the system clock', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(1_000_000);
      const limiter = new MemoryRateLimiter();
      expect((await limiter.hit('rt', 1, 1)).allowed).toBe(true);
      expect((await limiter.hit('rt', 1, 1)).allowed).toBe(false);
      vi.setSystemTime(1_001_000);
      expect((await limiter.hit('rt', 1, 1)).allowed).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps memory bounded: sweeps expired windows and caps the bucket count', async () => {
    let now = 0;
    const limiter = new MemoryRateLimiter({ now: () => now, maxBuckets: 100, sweepMs: 1_000 });
    for (let i = 0; i < 1_000; i++) await limiter.hit(`ip:${i}`, 10, 60);
    expect(limiter.size).toBeLessThanOrEqual(100);
    now += 61_000;
    await limiter.hit('late', 10, 60);
    expect(limiter.size).toBe(1);
  });

  it('past the cap drops the oldest buckets, without scanning every bucket for each new one', async () => {
    let now = 0;
    const limiter = new MemoryRateLimiter({ now: () => now, maxBuckets: 100, sweepMs: 1_000 });
    for (let i = 0; i < 1_000; i++) await limiter.hit(`ip:${i}`, 10, 60);
    expect(limiter.size).toBeLessThanOrEqual(100);
    expect(limiter.size).toBeGreaterThanOrEqual(90);
    // Only the first hit's timed sweep: before, every bucket past the cap swept all of them.
    expect(limiter.sweeps).toBe(1);
    // The newest buckets are kept and count on; an evicted one starts afresh.
    expect((await limiter.hit('ip:999', 10, 60)).remaining).toBe(8);
    expect((await limiter.hit('ip:0', 10, 60)).remaining).toBe(9);
    now += 1_000;
    await limiter.hit('ip:1', 10, 60);
    expect(limiter.sweeps).toBe(2);
  });
});

describe('RedisRateLimiter (real Redis at 127.0.0.1:6379)', () => {
  const prefix = `test:${randomUUID()}`;
  let a: RedisRateLimiter;
  let b: RedisRateLimiter;
  let admin: Redis;

  beforeAll(async () => {
    // Fails (does not skip) when Redis is not running: CI starts it.
    a = new RedisRateLimiter(REDIS_URL);
    b = new RedisRateLimiter(REDIS_URL);
    admin = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await admin.connect();
    await Promise.all([a.ready(), b.ready()]);
  });
  afterAll(async () => {
    const keys = await admin.keys(`ri:rl:*${prefix}*`);
    if (keys.length) await admin.del(...keys);
    await Promise.all([a.close(), b.close(), admin.quit()]);
  });

  it('counts atomically under ri:rl: keys with a TTL, and resets when the window ends', async () => {
    const bucket = `${prefix}:count`;
    const hits = await Promise.all(Array.from({ length: 5 }, () => a.hit(bucket, 3, 1)));
    expect(hits.filter((h) => h.allowed)).toHaveLength(3);
    expect(hits.map((h) => h.remaining).sort()).toEqual([0, 0, 0, 1, 2]);
    expect(hits.every((h) => h.resetSeconds === 1 && !h.degraded)).toBe(true);
    const ttl = await admin.pttl(`ri:rl:${bucket}:1`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1_000);
    await sleep(1_100);
    expect(await a.hit(bucket, 3, 1)).toEqual({ allowed: true, limit: 3, remaining: 2, resetSeconds: 1 });
  });

  it('two replicas share one budget', async () => {
    const bucket = `${prefix}:shared`;
    const results = [];
    for (let i = 0; i < 10; i++) results.push(await (i % 2 ? a : b).hit(bucket, 6, 60));
    expect(results.filter((r) => r.allowed)).toHaveLength(6);
    expect(results[5]).toMatchObject({ allowed: true, remaining: 0 });
    expect(results[6]).toMatchObject({ allowed: false, remaining: 0 });
    expect(results[9]?.resetSeconds).toBeGreaterThan(55);
  });

  it('a middleware on each of two apps (replicas) enforces one shared per-key limit', async () => {
    const policy = { perKey: { limit: 4, windowSeconds: 60 } };
    const replicas = [tinyApp(a, policy), tinyApp(b, policy)];
    const key = `${prefix}-k`;
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await replicas[i % 2]!.request('/v1/things', { headers: { 'x-key': key } });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('holds the limits in the process when Redis is unreachable (never none), logs once, and says so', async () => {
    const logs: string[] = [];
    // Nothing listens on port 1: connections are refused.
    const down = new RedisRateLimiter('redis://127.0.0.1:1', { log: (m) => logs.push(m) });
    try {
      const hit = await down.hit('x', 1, 60);
      expect(hit).toMatchObject({ allowed: true, degraded: true, remaining: 0 });
      expect(down.degradedReason()).toMatch(/Redis unreachable/);
      await sleep(300); // let a reconnect attempt fail too
      const app = tinyApp(down, { perKey: { limit: 3, windowSeconds: 60 } });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await app.request('/v1/things', { headers: { 'x-key': 'abc' } }, fromIp('10.0.0.1'));
        statuses.push(res.status);
      }
      // Before: every request went through uncounted while Redis was away.
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatch(/Redis unreachable/);
    } finally {
      await down.close();
    }
  });

  it('holds the limits locally while its connection is dropped, and counts in Redis again once reconnected', async () => {
    const logs: string[] = [];
    const c = new RedisRateLimiter(REDIS_URL, { log: (m) => logs.push(m) });
    try {
      await c.ready();
      const bucket = `${prefix}:drop`;
      expect(await c.hit(bucket, 5, 60)).toMatchObject({ remaining: 4 });
      const id = await c.redis.client('ID');
      const reconnected = once(c.redis, 'ready');
      await admin.client('KILL', 'ID', String(id));
      expect(await c.hit(bucket, 5, 60)).toMatchObject({ allowed: true, degraded: true });
      await reconnected;
      expect(c.degradedReason()).toBeNull();
      const after = await c.hit(bucket, 5, 60);
      expect(after.degraded).toBeUndefined();
      expect(after.remaining).toBe(3);
      expect(logs[0]).toMatch(/Redis unreachable/);
      expect(logs[1]).toMatch(/reachable again/);
    } finally {
      await c.close();
    }
  });

  it('createRateLimiter picks Redis with a URL and memory without', async () => {
    const r = createRateLimiter(REDIS_URL);
    const m = createRateLimiter();
    expect(r).toBeInstanceOf(RedisRateLimiter);
    expect(m).toBeInstanceOf(MemoryRateLimiter);
    await Promise.all([r.close(), m.close()]);
  });
});

describe('rateLimit middleware', () => {
  it('sends the IETF draft and X-RateLimit headers on every response, keyed or not', async () => {
    const app = tinyApp(new MemoryRateLimiter(), {
      perKey: { limit: 600, windowSeconds: 60 },
      perIp: { limit: 120, windowSeconds: 60 },
    });
    const res = await app.request('/v1/things', { headers: { 'x-key': 'abcd1234' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('RateLimit-Policy')).toBe('"per-key";q=600;w=60');
    expect(res.headers.get('RateLimit')).toBe('"per-key";r=599;t=60');
    expect(res.headers.get('X-RateLimit-Limit')).toBe('600');
    expect(res.headers.get('X-RateLimit-Remaining')).toBe('599');
    const reset = Number(res.headers.get('X-RateLimit-Reset'));
    expect(reset - Date.now() / 1000).toBeGreaterThan(58);
    expect(reset - Date.now() / 1000).toBeLessThan(62);
    // Error responses of a keyed caller carry them too.
    const boom = await app.request('/v1/boom', { headers: { 'x-key': 'abcd1234' } });
    expect(boom.status).toBe(500);
    expect(boom.headers.get('RateLimit')).toBe('"per-key";r=598;t=60');
    // Anonymous responses carry their per-IP budget (the issue found them without any).
    const anon = await app.request('/v1/things', {}, fromIp('10.0.0.9'));
    expect(anon.status).toBe(200);
    expect(anon.headers.get('RateLimit')).toMatch(/^"per-ip";r=\d+;t=\d+$/);
  });

  it('answers 429 problem+json with Retry-After, saying which limit was hit (per key)', async () => {
    const app = tinyApp(new MemoryRateLimiter(), { perKey: { limit: 2, windowSeconds: 30 } });
    const headers = { 'x-key': 'k_live_1' };
    expect((await app.request('/v1/things', { headers })).status).toBe(200);
    expect((await app.request('/v1/things', { headers })).status).toBe(200);
    const res = await app.request('/v1/things', { headers });
    expect(res.status).toBe(429);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('Retry-After')).toBe('30');
    expect(res.headers.get('RateLimit-Policy')).toBe('"per-key";q=2;w=30');
    expect(res.headers.get('RateLimit')).toBe('"per-key";r=0;t=30');
    expect(res.headers.get('X-RateLimit-Remaining')).toBe('0');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      type: '/docs/errors#rate_limited',
      title: 'Too many requests',
      status: 429,
      code: 'rate_limited',
      instance: '/v1/things',
      request_id: 'req-1',
      limit_scope: 'per-key',
      limit: 2,
      window_seconds: 30,
      retry_after: 30,
    });
    expect(body.detail).toMatch(/API key 'k_live_1'/);
    expect(body.detail).toMatch(/per-key limit is 2 requests per 30 s/);
    expect(body.detail).toMatch(/resets in 30 s \(at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)/);
    // Another key is not affected.
    expect((await app.request('/v1/things', { headers: { 'x-key': 'other' } })).status).toBe(200);
  });

  it('applies the per-IP limit to requests without a key, per client IP', async () => {
    const app = tinyApp(new MemoryRateLimiter(), { perIp: { limit: 2, windowSeconds: 60 } });
    expect((await app.request('/v1/things', {}, fromIp('10.0.0.1'))).status).toBe(200);
    expect((await app.request('/v1/things', {}, fromIp('::ffff:10.0.0.1'))).status).toBe(200);
    const res = await app.request('/v1/things', {}, fromIp('10.0.0.1'));
    expect(res.status).toBe(429);
    expect(res.headers.get('RateLimit-Policy')).toBe('"per-ip";q=2;w=60');
    expect(res.headers.get('Retry-After')).toBe('60');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'rate_limited', limit_scope: 'per-ip', limit: 2, window_seconds: 60 });
    expect(body.detail).toMatch(/this IP address/);
    expect(body.detail).toMatch(/per-ip limit is 2 requests per 60 s/);
    // Another IP has its own budget; a key is counted per key, not against the IP.
    expect((await app.request('/v1/things', {}, fromIp('10.0.0.2'))).status).toBe(200);
    const keyed = await app.request('/v1/things', { headers: { 'x-key': 'k' } }, fromIp('10.0.0.1'));
    expect(keyed.status).toBe(200);
  });

  it('reads X-Forwarded-For only when the proxy is trusted', async () => {
    const trusted = tinyApp(new MemoryRateLimiter(), {
      perIp: { limit: 1, windowSeconds: 60 },
      trustProxy: 1,
    });
    const xff = (ip: string) => ({ headers: { 'x-forwarded-for': `6.6.6.6, ${ip}` } });
    const proxy = fromIp('127.0.0.1');
    expect((await trusted.request('/v1/things', xff('1.1.1.1'), proxy)).status).toBe(200);
    expect((await trusted.request('/v1/things', xff('2.2.2.2'), proxy)).status).toBe(200);
    expect((await trusted.request('/v1/things', xff('1.1.1.1'), proxy)).status).toBe(429);

    const untrusted = tinyApp(new MemoryRateLimiter(), { perIp: { limit: 1, windowSeconds: 60 } });
    expect((await untrusted.request('/v1/things', xff('1.1.1.1'), proxy)).status).toBe(200);
    // A forged header does not buy a new budget: both come from the proxy's socket address.
    expect((await untrusted.request('/v1/things', xff('2.2.2.2'), proxy)).status).toBe(429);
  });

  it('clientIp: the address the outermost trusted proxy saw (never a forged left-most entry), socket address otherwise', async () => {
    const app = new Hono();
    app.get('/', (c) => c.text(`${clientIp(c, true)} ${clientIp(c, 2)} ${clientIp(c, 4)} ${clientIp(c)}`));
    const res = await app.request(
      '/',
      { headers: { 'x-forwarded-for': '1.1.1.1, 2.2.2.2, 3.3.3.3' } },
      fromIp('9.9.9.9'),
    );
    // true = one proxy: the right-most entry; 2 hops: the one before; more hops than entries: the socket.
    expect(await res.text()).toBe('3.3.3.3 2.2.2.2 9.9.9.9 9.9.9.9');
    const bare = await new Hono().get('/', (c) => c.text(clientIp(c))).request('/');
    expect(await bare.text()).toBe('unknown');
  });

  it('lets requests through when the limiter throws, and logs once', async () => {
    const logs: string[] = [];
    const broken: RateLimiter = {
      hit: () => Promise.reject(new Error('store on fire')),
      close: async () => {},
    };
    const app = tinyApp(broken, { log: (m) => logs.push(m) });
    for (let i = 0; i < 3; i++) {
      const res = await app.request('/v1/things', { headers: { 'x-key': 'k' } });
      expect(res.status).toBe(200);
    }
    expect(logs).toHaveLength(1);
  });
});

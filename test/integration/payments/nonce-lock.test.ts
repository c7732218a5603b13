import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryNonceLock, RedisNonceLock } from '../../../src/payments/nonce-lock.js';

const REDIS_URL = 'redis://127.0.0.1:6379';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client as paymentsFromConfig makes it: no offline queue, no retries, errors swallowed. */
function lockClient(url: string): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  redis.on('error', () => {});
  return redis;
}

describe('MemoryNonceLock', () => {
  it('acquires a free key once, refuses it while held, and frees it on release', async () => {
    const lock = new MemoryNonceLock();
    expect(await lock.acquire('eip155:8453:0xabc', 60_000)).toBe(true);
    expect(await lock.acquire('eip155:8453:0xabc', 60_000)).toBe(false);
    // Other keys are independent.
    expect(await lock.acquire('eip155:8453:0xdef', 60_000)).toBe(true);
    await lock.release('eip155:8453:0xabc');
    expect(await lock.acquire('eip155:8453:0xabc', 60_000)).toBe(true);
    expect(await lock.acquire('eip155:8453:0xdef', 60_000)).toBe(false);
    // Releasing a key that is not held is harmless.
    await lock.release('never-held');
  });

  it('frees a key when its TTL runs out', async () => {
    let now = 0;
    const lock = new MemoryNonceLock({ now: () => now });
    expect(await lock.acquire('ttl', 100)).toBe(true);
    expect(await lock.acquire('ttl', 100)).toBe(false);
    now += 100;
    expect(await lock.acquire('ttl', 100)).toBe(true);
    expect(await lock.acquire('ttl', 100)).toBe(false);
  });

  it('two instances (two processes) do not share locks', async () => {
    const a = new MemoryNonceLock();
    const b = new MemoryNonceLock();
    expect(await a.acquire('k', 60_000)).toBe(true);
    expect(await b.acquire('k', 60_000)).toBe(true);
  });

  it('keeps working past its sweep threshold (expired keys are swept, held ones kept)', async () => {
    let now = 0;
    const lock = new MemoryNonceLock({ now: () => now });
    expect(await lock.acquire('held', 60_000)).toBe(true);
    for (let i = 0; i < 10_050; i++) await lock.acquire(`short-${i}`, 1);
    now += 1;
    expect(await lock.acquire('short-0', 60_000)).toBe(true);
    expect(await lock.acquire('held', 60_000)).toBe(false);
  });
});

describe('RedisNonceLock (real Redis at 127.0.0.1:6379)', () => {
  const prefix = `test:${randomUUID()}`;
  let redisA: Redis;
  let redisB: Redis;
  let admin: Redis;
  let a: RedisNonceLock;
  let b: RedisNonceLock;

  beforeAll(async () => {
    // Fails (does not skip) when Redis is not running: CI starts it.
    redisA = lockClient(REDIS_URL);
    redisB = lockClient(REDIS_URL);
    admin = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await Promise.all([once(redisA, 'ready'), once(redisB, 'ready'), admin.connect()]);
    a = new RedisNonceLock(redisA);
    b = new RedisNonceLock(redisB);
  });
  afterAll(async () => {
    const keys = await admin.keys(`ri:x402:${prefix}*`);
    if (keys.length) await admin.del(...keys);
    await Promise.all([a.close(), b.close(), admin.quit()]);
  });

  it('two instances sharing Redis: only one acquires a key, under ri:x402: with the TTL', async () => {
    const key = `${prefix}:shared`;
    expect(await a.acquire(key, 60_000)).toBe(true);
    expect(await b.acquire(key, 60_000)).toBe(false);
    expect(await a.acquire(key, 60_000)).toBe(false);
    expect(await admin.get(`ri:x402:${key}`)).toBe('1');
    const ttl = await admin.pttl(`ri:x402:${key}`);
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    // A refusal by Redis does not leave the loser holding its local lock.
    await a.release(key);
    expect(await b.acquire(key, 60_000)).toBe(true);
    expect(await a.acquire(key, 60_000)).toBe(false);
    await b.release(key);
  });

  it('concurrent acquires of one key from both instances: exactly one wins', async () => {
    for (let round = 0; round < 10; round++) {
      const key = `${prefix}:race:${round}`;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).acquire(key, 60_000)),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    }
  });

  it('release frees the key in Redis for the other instance', async () => {
    const key = `${prefix}:release`;
    expect(await b.acquire(key, 60_000)).toBe(true);
    expect(await a.acquire(key, 60_000)).toBe(false);
    await b.release(key);
    expect(await admin.exists(`ri:x402:${key}`)).toBe(0);
    expect(await a.acquire(key, 60_000)).toBe(true);
    expect(await b.acquire(key, 60_000)).toBe(false);
    await a.release(key);
    expect(await b.acquire(key, 60_000)).toBe(true);
    await b.release(key);
    // Releasing a key nobody holds is harmless.
    await a.release(`${prefix}:never-held`);
  });

  it('a key is free again, for both instances, when its TTL runs out', async () => {
    const key = `${prefix}:ttl`;
    expect(await a.acquire(key, 200)).toBe(true);
    expect(await b.acquire(key, 200)).toBe(false);
    await sleep(300);
    expect(await admin.exists(`ri:x402:${key}`)).toBe(0);
    expect(await b.acquire(key, 200)).toBe(true);
    expect(await a.acquire(key, 200)).toBe(false);
    await sleep(300);
    expect(await a.acquire(key, 60_000)).toBe(true);
    await a.release(key);
  });

  it('falls back to memory locks, without throwing, when Redis is unreachable', async () => {
    // Nothing listens on port 1: connections are refused.
    const down = lockClient('redis://127.0.0.1:1');
    let now = 0;
    const lock = new RedisNonceLock(down, { now: () => now });
    try {
      const key = `${prefix}:down`;
      expect(await lock.acquire(key, 60_000)).toBe(true);
      expect(await lock.acquire(key, 60_000)).toBe(false);
      await sleep(100); // a connection attempt has failed by now; still memory
      expect(await lock.acquire(`${key}:2`, 60_000)).toBe(true);
      expect(await lock.acquire(`${key}:2`, 60_000)).toBe(false);
      // Release frees the memory lock and swallows the Redis error.
      await expect(lock.release(key)).resolves.toBeUndefined();
      expect(await lock.acquire(key, 60_000)).toBe(true);
      // TTL expiry works in memory too.
      expect(await lock.acquire(`${key}:ttl`, 100)).toBe(true);
      now += 100;
      expect(await lock.acquire(`${key}:ttl`, 100)).toBe(true);
      // Nothing reached the real Redis.
      expect(await admin.exists(`ri:x402:${key}`)).toBe(0);
    } finally {
      down.disconnect();
    }
  });

  it('close() does not throw when Redis is unreachable, and stops reconnecting', async () => {
    const down = lockClient('redis://127.0.0.1:1');
    const lock = new RedisNonceLock(down);
    try {
      expect(await lock.acquire(`${prefix}:closing`, 60_000)).toBe(true);
      // Refused once, and retrying (events.once would reject on the 'error' event).
      await new Promise((resolve) => down.once('reconnecting', resolve));
      await expect(lock.close()).resolves.toBeUndefined();
      // No connection attempt after close (ioredis may leave status at 'reconnecting' with no timer).
      let attempts = 0;
      down.on('connecting', () => attempts++);
      down.on('reconnecting', () => attempts++);
      await sleep(500);
      expect(attempts).toBe(0);
    } finally {
      down.disconnect();
    }
  });
});

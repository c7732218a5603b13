#!/usr/bin/env node
// The rate limiter alone (dist/access/rate-limiter.js, `npm run build` first), CPU per hit and memory:
// - memory, one bucket: a key's requests in one window;
// - memory, new buckets: a client with ever new addresses (past the 100,000-bucket cap);
// - Redis, one bucket (when Redis answers at REDIS_URL, default redis://127.0.0.1:6379).
// Each row is measured BENCH_REPEAT times (default 3) and the median is reported.
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const { MemoryRateLimiter, RedisRateLimiter } = await import(`${root}/dist/access/rate-limiter.js`);
const repeat = Number(process.env.BENCH_REPEAT ?? 3);
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const cpuMs = (t) => {
  const u = process.cpuUsage(t);
  return (u.user + u.system) / 1000;
};
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const heapMb = () => {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed / 1e6;
};

async function row(name, n, make, bucket) {
  const us = [];
  const mb = [];
  for (let r = 0; r < repeat; r++) {
    const limiter = await make();
    const before = heapMb();
    const t = process.cpuUsage();
    for (let i = 0; i < n; i++) await limiter.hit(bucket(i), 1_000_000_000, 60);
    us.push((cpuMs(t) * 1000) / n);
    mb.push(heapMb() - before);
    await limiter.close();
  }
  console.log(
    `${name.padEnd(36)} ${String(n).padStart(9)} hits  ${median(us).toFixed(2).padStart(7)} µs CPU/hit  heap +${median(mb).toFixed(1)} MB`,
  );
}

const ip = (i) => `ip:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
if (!globalThis.gc) console.log('(run with node --expose-gc for the heap column)');
await row(
  'memory, one bucket',
  1_000_000,
  () => new MemoryRateLimiter(),
  () => 'key:abcdefgh',
);
await row('memory, new bucket each hit', 500_000, () => new MemoryRateLimiter(), ip);

const probe = new RedisRateLimiter(redisUrl);
const reachable = await probe.ready(2_000).then(
  () => true,
  (error) => {
    console.log(`Redis row skipped: ${error.message}`);
    return false;
  },
);
await probe.close();
if (reachable)
  await row(
    'Redis, one bucket (one hit at a time)',
    20_000,
    async () => {
      const limiter = new RedisRateLimiter(redisUrl);
      await limiter.ready(2_000);
      return limiter;
    },
    () => `bench:${process.pid}`,
  );

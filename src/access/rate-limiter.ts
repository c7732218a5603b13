/**
 * The rate limiter: counters per bucket and window, in this process or in Redis shared by every
 * replica, with the in-process counters standing in while Redis is away. Knows nothing of
 * requests, keys or headers: the API (http/rate-limit.ts) and the sign-in mail (web/) count
 * through it.
 *
 * Hand-written, not rate-limiter-flexible (its RateLimiterRedis with a RateLimiterMemory insurance
 * limiter was tried in place of these two, same build, alternating): keyed GET /v1/elements/Fe cost
 * the same CPU per request (Redis: 53 µs here, 50 µs there; memory: 38 and 40 µs; medians of five
 * 5-s autocannon runs on a loaded 2-core machine), but its memory limiter keeps a Map entry and a
 * timer per key for the whole window with no cap: 500,000 client addresses in one window held
 * 266 MB there against 26 MB here (capped at 100,000 buckets), and the insurance limiter is that
 * same class, so the bound this process keeps while Redis is away would go. Its Redis half alone
 * would replace only the Lua script below.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

type Log = (msg: string, fields?: Record<string, unknown>) => void;

/** One counted request against one bucket: whether it may pass, and what is left of the window. */
export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  /** Requests left in the current window after this one (never below 0). */
  remaining: number;
  /** Seconds until the window resets (at least 1 while counting). */
  resetSeconds: number;
  /** True when the shared store could not be reached and the request was counted in this process. */
  degraded?: boolean;
}

export interface RateLimiter {
  /**
   * Counts one request against `bucket`, which allows `limit` requests per `windowSeconds`. The
   * in-process limiter answers at once (no promise: it is on every request's path).
   */
  hit(bucket: string, limit: number, windowSeconds: number): RateLimitResult | Promise<RateLimitResult>;
  /** Null when limits are shared as configured; otherwise why they are held in this process only. */
  degradedReason?(): string | null;
  close(): Promise<void>;
}

function result(count: number, limit: number, resetMs: number): RateLimitResult {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetSeconds: Math.max(1, Math.ceil(resetMs / 1000)),
  };
}

/**
 * Fixed-window counters in this process. Memory stays bounded: expired windows are swept at most
 * once per `sweepMs`, and past `maxBuckets` the oldest buckets are dropped (they restart at zero).
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { count: number; resetAt: number }>();
  private nextSweep = 0;
  private sweepCount = 0;
  private readonly maxBuckets: number;
  private readonly sweepMs: number;
  private readonly now: () => number;

  constructor(options: { maxBuckets?: number; sweepMs?: number; now?: () => number } = {}) {
    this.maxBuckets = options.maxBuckets ?? 100_000;
    this.sweepMs = options.sweepMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** Live buckets, for tests and diagnostics. */
  get size(): number {
    return this.buckets.size;
  }

  /** Full sweeps of expired windows so far (at most one per `sweepMs`), for tests and diagnostics. */
  get sweeps(): number {
    return this.sweepCount;
  }

  hit(bucket: string, limit: number, windowSeconds: number): RateLimitResult {
    const now = this.now();
    if (now >= this.nextSweep) this.sweep(now);
    const key = `${bucket}:${windowSeconds}`;
    let entry = this.buckets.get(key);
    if (!entry || entry.resetAt <= now) {
      // Re-insert so the Map's insertion order stays close to expiry order for eviction.
      if (entry) this.buckets.delete(key);
      entry = { count: 0, resetAt: now + windowSeconds * 1000 };
      this.buckets.set(key, entry);
      if (this.buckets.size > this.maxBuckets) this.evict();
    }
    entry.count++;
    return result(entry.count, limit, entry.resetAt - now);
  }

  private sweep(now: number): void {
    this.nextSweep = now + this.sweepMs;
    this.sweepCount++;
    for (const [key, entry] of this.buckets) if (entry.resetAt <= now) this.buckets.delete(key);
  }

  /**
   * Drops the oldest tenth of the buckets (insertion order, which is window-start order: the
   * expired ones are at the front). Not a sweep, and not one bucket at a time: either way each new
   * bucket past the cap would walk the whole map (or the holes left at its front), so a client with
   * ever new addresses made every request cost 100,000 steps (500,000 new addresses: 85 s of CPU
   * with a sweep, 11 s one at a time, under a second a tenth at a time).
   */
  private evict(): void {
    const keep = Math.floor(this.maxBuckets * 0.9);
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= keep) break;
      this.buckets.delete(key);
    }
  }

  async close(): Promise<void> {
    this.buckets.clear();
  }
}

// One round trip, atomic on the server: count, start the window on the first hit, report its TTL.
// A key that somehow lost its TTL gets one again, so no bucket can block forever.
const SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {count, tonumber(ARGV[1])}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;
const SCRIPT_SHA = createHash('sha1').update(SCRIPT).digest('hex');

const REDIS_KEY_PREFIX = 'ri:rl:';

export interface RedisRateLimiterOptions {
  /** A command slower than this fails open (ms). Default 250. */
  commandTimeoutMs?: number;
  log?: Log;
}

/**
 * Fixed-window counters in Redis (keys `ri:rl:<bucket>:<window>`), so every server process that
 * shares the Redis shares the budgets. If Redis cannot be reached, the limits are held in this
 * process instead (never none: each replica enforces the same budget on what it sees), the outage
 * is logged once and reported by degradedReason() (/readyz), and Redis is used again as soon as
 * it is back, without a restart. Never a 500.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly redis: Redis;
  private readonly log: Log;
  private down = false;
  private everReady = false;
  /** The limits while Redis is away. */
  private readonly local = new MemoryRateLimiter();

  constructor(url: string, options: RedisRateLimiterOptions = {}) {
    this.log = options.log ?? (() => {});
    this.redis = new (loadIoredis().Redis)(url, {
      // No queueing while disconnected: a request must not wait for Redis to come back.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 250,
      connectTimeout: 2_000,
      retryStrategy: (times) => Math.min(times * 200, 5_000),
    });
    // ioredis reports connection errors as events; without a listener it prints each one.
    this.redis.on('error', (error: Error) => this.markDown(error));
    this.redis.on('ready', () => {
      this.everReady = true;
      if (this.down) this.log('rate limiter: Redis reachable again', {});
      this.down = false;
    });
  }

  /** Resolves once connected (or rejects after `timeoutMs`); requests before then fail open. */
  ready(timeoutMs = 5_000): Promise<void> {
    if (this.redis.status === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        reject(new Error(`Redis not ready after ${timeoutMs} ms`));
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      this.redis.once('ready', onReady);
    });
  }

  async hit(bucket: string, limit: number, windowSeconds: number): Promise<RateLimitResult> {
    const key = `${REDIS_KEY_PREFIX}${bucket}:${windowSeconds}`;
    const windowMs = String(windowSeconds * 1000);
    // Not connected (yet, or any more): don't wait. Before the first connection this is not an
    // outage worth a log line; a refused connection is logged by the 'error' event anyway.
    if (this.redis.status !== 'ready') {
      if (this.everReady) this.markDown(new Error(`connection ${this.redis.status}`));
      return this.locally(bucket, limit, windowSeconds);
    }
    try {
      let reply: unknown;
      try {
        reply = await this.redis.evalsha(SCRIPT_SHA, 1, key, windowMs);
      } catch (error) {
        if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error;
        reply = await this.redis.eval(SCRIPT, 1, key, windowMs);
      }
      const [count, ttl] = reply as [number, number];
      return result(count, limit, ttl);
    } catch (error) {
      this.markDown(error as Error);
      return this.locally(bucket, limit, windowSeconds);
    }
  }

  private async locally(bucket: string, limit: number, windowSeconds: number): Promise<RateLimitResult> {
    return { ...(await this.local.hit(bucket, limit, windowSeconds)), degraded: true };
  }

  degradedReason(): string | null {
    return this.redis.status === 'ready' ? null : 'Redis unreachable: rate limits are held per process';
  }

  private markDown(error: Error): void {
    if (this.down) return;
    this.down = true;
    this.log('rate limiter: Redis unreachable, holding the limits in this process until it is back', {
      err: error.message,
    });
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}

/** Redis when a URL is given (shared between replicas), otherwise counters in this process. */
export function createRateLimiter(redisUrl?: string, options: RedisRateLimiterOptions = {}): RateLimiter {
  return redisUrl ? new RedisRateLimiter(redisUrl, options) : new MemoryRateLimiter();
}

/**
 * ioredis, loaded when a Redis is configured (a third of a second of every start otherwise:
 * the embedded default and most tests have none). CommonJS, so required as `import` would.
 */
export function loadIoredis(): typeof import('ioredis') {
  return createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
}

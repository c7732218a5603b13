import { createHash } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { Redis } from 'ioredis';
import { addAnswerHeaders } from './answer-headers.js';
import { canonicalIp, ipMatcher } from './ip-allow.js';
import { problemType } from './problem.js';

/** One counted request against one bucket: whether it may pass, and what is left of the window. */
export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  /** Requests left in the current window after this one (never below 0). */
  remaining: number;
  /** Seconds until the window resets (at least 1 while counting). */
  resetSeconds: number;
  /** True when the store could not be reached and the request was let through uncounted. */
  degraded?: boolean;
}

export interface RateLimiter {
  /** Counts one request against `bucket`, which allows `limit` requests per `windowSeconds`. */
  hit(bucket: string, limit: number, windowSeconds: number): Promise<RateLimitResult>;
  /** Null when limits are shared as configured; otherwise why they are held in this process only. */
  degradedReason?(): string | null;
  close(): Promise<void>;
}

type Log = (msg: string, fields?: Record<string, unknown>) => void;

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

  async hit(bucket: string, limit: number, windowSeconds: number): Promise<RateLimitResult> {
    const now = this.now();
    if (now >= this.nextSweep) this.sweep(now);
    const key = `${bucket}:${windowSeconds}`;
    let entry = this.buckets.get(key);
    if (!entry || entry.resetAt <= now) {
      // Re-insert so the Map's insertion order stays close to expiry order for eviction.
      if (entry) this.buckets.delete(key);
      entry = { count: 0, resetAt: now + windowSeconds * 1000 };
      this.buckets.set(key, entry);
      if (this.buckets.size > this.maxBuckets) this.evict(now);
    }
    entry.count++;
    return result(entry.count, limit, entry.resetAt - now);
  }

  private sweep(now: number): void {
    this.nextSweep = now + this.sweepMs;
    for (const [key, entry] of this.buckets) if (entry.resetAt <= now) this.buckets.delete(key);
  }

  private evict(now: number): void {
    this.sweep(now);
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= this.maxBuckets) break;
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

export const REDIS_KEY_PREFIX = 'ri:rl:';

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
    this.redis = new Redis(url, {
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

export interface LimitSpec {
  limit: number;
  windowSeconds: number;
}

export interface RateLimitPolicy {
  /** Budget of each API key (by its prefix). Default 600 per 60 s. */
  perKey: LimitSpec;
  /** The budget of this request's key, when it depends on the key (its plan); else perKey. */
  perKeyFor?: (c: Context) => LimitSpec;
  /** Budget of each client IP for requests without a key. Default 120 per 60 s. */
  perIp: LimitSpec;
  /** Which proxies' X-Forwarded-For entries to believe (see clientIp). Default: none. */
  trustProxy?: TrustProxy;
  log?: Log;
}

export const DEFAULT_RATE_LIMIT_POLICY: RateLimitPolicy = {
  perKey: { limit: 600, windowSeconds: 60 },
  perIp: { limit: 120, windowSeconds: 60 },
};

/**
 * The proxies in front of the service whose X-Forwarded-For entries are believed: none (false or
 * 0), a hop count (true is one), or their addresses and CIDR ranges (TRUST_PROXY).
 */
export type TrustProxy = boolean | number | readonly string[];

/**
 * The client IP. Each proxy appends the address it saw to X-Forwarded-For, so entries are read
 * from the right, and entries left of the client's are the client's own words (forgeable, never
 * believed):
 * - a hop count n: the n-th entry from the right (the socket's address when there are fewer);
 * - proxy ranges: only when the socket's peer is one of them, the right-most entry that is not
 *   one of them (a run of trusted entries is skipped; a non-address stops the walk);
 * - otherwise (and for anything that is not an address): the socket's peer.
 */
export function clientIp(c: Context, trustProxy: TrustProxy = false): string {
  const peer = peerAddress(c);
  if (typeof trustProxy === 'object') {
    const trusted = ipMatcher(trustProxy);
    if (!trusted(peer)) return peer;
    const forwarded = forwardedFor(c);
    let client = peer;
    for (let i = forwarded.length - 1; i >= 0; i--) {
      const ip = canonicalIp(forwarded[i]!);
      if (ip === null) break;
      client = ip;
      if (!trusted(ip)) break;
    }
    return client;
  }
  const hops = trustProxy === true ? 1 : trustProxy === false ? 0 : trustProxy;
  if (hops > 0) {
    const forwarded = forwardedFor(c);
    const ip = forwarded.length >= hops ? canonicalIp(forwarded[forwarded.length - hops]!) : null;
    if (ip !== null) return ip;
  }
  return peer;
}

function forwardedFor(c: Context): string[] {
  return (c.req.header('x-forwarded-for') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The socket's peer address, canonical; 'unknown' without a Node socket (app.request() in tests). */
function peerAddress(c: Context): string {
  try {
    const address = getConnInfo(c).remote.address;
    if (address) return canonicalIp(address) ?? address.toLowerCase();
  } catch {
    // No Node socket: fall through.
  }
  return 'unknown';
}

type Scope = 'per-key' | 'per-ip';

/**
 * Counts each request against the caller's budget: per API key when the auth middleware set
 * `apiKeyPrefix`, otherwise per client IP. Every response (and every 429) carries the IETF draft
 * `RateLimit-Policy` / `RateLimit` headers and the `X-RateLimit-*` ones; a 429 is a problem+json
 * that says which limit was hit, its size and window, and when it resets. Fails open.
 */
export function rateLimit(limiter: RateLimiter, policy: Partial<RateLimitPolicy> = {}): MiddlewareHandler {
  const perKey = policy.perKey ?? DEFAULT_RATE_LIMIT_POLICY.perKey;
  const perIp = policy.perIp ?? DEFAULT_RATE_LIMIT_POLICY.perIp;
  const log = policy.log ?? (() => {});
  let failedOnce = false;

  return async (c, next) => {
    const keyPrefix = c.get('apiKeyPrefix') as unknown;
    const keyed = typeof keyPrefix === 'string' && keyPrefix !== '';
    const scope: Scope = keyed ? 'per-key' : 'per-ip';
    const spec = keyed ? (policy.perKeyFor?.(c) ?? perKey) : perIp;
    const bucket = keyed ? `key:${keyPrefix}` : `ip:${clientIp(c, policy.trustProxy)}`;

    let hit: RateLimitResult;
    try {
      hit = await limiter.hit(bucket, spec.limit, spec.windowSeconds);
    } catch (error) {
      if (!failedOnce)
        log('rate limiter failed; letting requests through', { err: (error as Error).message });
      failedOnce = true;
      return next();
    }

    if (!hit.allowed)
      return tooManyRequests(
        c,
        scope,
        spec,
        hit,
        rateLimitHeaders(scope, spec, hit),
        keyed ? keyPrefix : undefined,
      );
    // On every answer, keyed or not, error problems included (answer-headers.ts).
    addAnswerHeaders(c, rateLimitHeaders(scope, spec, hit));
    await next();
  };
}

function rateLimitHeaders(scope: Scope, spec: LimitSpec, hit: RateLimitResult): Record<string, string> {
  return {
    'ratelimit-policy': `"${scope}";q=${spec.limit};w=${spec.windowSeconds}`,
    ratelimit: `"${scope}";r=${hit.remaining};t=${hit.resetSeconds}`,
    'x-ratelimit-limit': String(spec.limit),
    'x-ratelimit-remaining': String(hit.remaining),
    // Epoch seconds, as GitHub and most APIs send it; `RateLimit`'s t= is the delta.
    'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + hit.resetSeconds),
  };
}

function tooManyRequests(
  c: Context,
  scope: Scope,
  spec: LimitSpec,
  hit: RateLimitResult,
  headers: Record<string, string>,
  keyPrefix: string | undefined,
): Response {
  const resetAt = new Date(Date.now() + hit.resetSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const who =
    scope === 'per-key' ? `API key '${keyPrefix}'` : 'this IP address (requests without an API key)';
  const hint = scope === 'per-ip' ? ' Send an API key for a larger budget.' : '';
  const body = {
    type: problemType(c, 'rate_limited'),
    title: 'Too many requests',
    status: 429,
    detail:
      `Rate limit exceeded for ${who}: the ${scope} limit is ${spec.limit} requests per ` +
      `${spec.windowSeconds} s. It resets in ${hit.resetSeconds} s (at ${resetAt}); retry after that.${hint}`,
    code: 'rate_limited',
    instance: c.req.path,
    request_id: c.get('requestId') as string | undefined,
    limit_scope: scope,
    limit: spec.limit,
    window_seconds: spec.windowSeconds,
    retry_after: hit.resetSeconds,
  };
  return c.json(body, 429, {
    'content-type': 'application/problem+json',
    'cache-control': 'no-store',
    'Retry-After': String(hit.resetSeconds),
    ...headers,
  });
}

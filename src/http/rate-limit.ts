/**
 * Rate limits, the HTTP layer: which bucket a request counts against (its API key, else its client
 * IP as the trusted proxies report it) and with which budget, the RateLimit headers on every
 * answer, and the 429. The counting itself is the limiter's (access/rate-limiter.ts).
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { RateLimiter, RateLimitResult } from '../access/rate-limiter.js';
import { ServiceError } from '../core/errors.js';
import { canonicalIp, ipMatcher } from '../util/ip-ranges.js';
import { addResponseHeaders } from './fast-path/response-headers.js';
import type { Middleware } from './middleware.js';

type Log = (msg: string, fields?: Record<string, unknown>) => void;

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

const DEFAULT_RATE_LIMIT_POLICY: RateLimitPolicy = {
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
 * that says which limit was hit, its size and window, and when it resets. Fails open. A middleware of
 * the app's chain (middleware.ts).
 */
export function rateLimitMiddleware(limiter: RateLimiter, policy: Partial<RateLimitPolicy> = {}): Middleware {
  const perKey = policy.perKey ?? DEFAULT_RATE_LIMIT_POLICY.perKey;
  const perIp = policy.perIp ?? DEFAULT_RATE_LIMIT_POLICY.perIp;
  const log = policy.log ?? (() => {});
  let failedOnce = false;

  const failed = (error: unknown): undefined => {
    if (!failedOnce) log('rate limiter failed; letting requests through', { err: (error as Error).message });
    failedOnce = true;
    return undefined;
  };
  const count = (c: Context): Response | undefined | Promise<Response | undefined> => {
    const keyPrefix = c.get('apiKeyPrefix') as unknown;
    const keyed = typeof keyPrefix === 'string' && keyPrefix !== '';
    const spec = keyed ? (policy.perKeyFor?.(c) ?? perKey) : perIp;
    const bucket = keyed ? `key:${keyPrefix}` : `ip:${clientIp(c, policy.trustProxy)}`;
    let hit: RateLimitResult | Promise<RateLimitResult>;
    try {
      hit = limiter.hit(bucket, spec.limit, spec.windowSeconds);
    } catch (error) {
      return failed(error);
    }
    const key = keyed ? keyPrefix : undefined;
    // The in-process limiter answers at once: no promise to wait for on every request.
    return hit instanceof Promise
      ? hit.then((h) => judge(c, spec, h, key), failed)
      : judge(c, spec, hit, key);
  };
  return { enter: count };
}

/** The 429 when the budget is spent; else the RateLimit headers, added to every answer. */
function judge(c: Context, spec: LimitSpec, hit: RateLimitResult, keyPrefix: string | undefined): undefined {
  const scope: Scope = keyPrefix !== undefined ? 'per-key' : 'per-ip';
  if (!hit.allowed) tooManyRequests(scope, spec, hit, rateLimitHeaders(scope, spec, hit), keyPrefix);
  // On every answer, keyed or not, error problems included (response-headers.ts).
  addResponseHeaders(c, rateLimitHeaders(scope, spec, hit));
  return undefined;
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
  scope: Scope,
  spec: LimitSpec,
  hit: RateLimitResult,
  headers: Record<string, string>,
  keyPrefix: string | undefined,
): never {
  const resetAt = new Date(Date.now() + hit.resetSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  // A feed token's bucket is its prefix marked feed_ (auth.ts): named as the token it is.
  const who =
    scope === 'per-ip'
      ? 'this IP address (requests without an API key)'
      : keyPrefix?.startsWith('feed_')
        ? `feed token 'rif_${keyPrefix.slice(5)}_…'`
        : `API key '${keyPrefix}'`;
  const hint = scope === 'per-ip' ? ' Send an API key for a larger budget.' : '';
  const detail =
    `Rate limit exceeded for ${who}: the ${scope} limit is ${spec.limit} requests per ` +
    `${spec.windowSeconds} s. It resets in ${hit.resetSeconds} s (at ${resetAt}); retry after that.${hint}`;
  const extra = {
    limit_scope: scope,
    limit: spec.limit,
    window_seconds: spec.windowSeconds,
    retry_after: hit.resetSeconds,
  };
  // Thrown, not answered: the chain's error handler makes the same problem of it, and the fast
  // path (fast-path.ts) hands a thrown request on to Hono rather than writing an answer it did not make.
  throw new ServiceError('rate_limited', detail, extra, {
    'Retry-After': String(hit.resetSeconds),
    ...headers,
  });
}

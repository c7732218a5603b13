import type { Context } from 'hono';
import { ServiceError } from '../core/errors.js';
import { clientIp, type LimitSpec, type RateLimiter, type TrustProxy } from './rate-limit.js';

/**
 * Invalid keys count against the client's address: each one costs a state-store lookup, so an
 * address that has sent its per-IP budget of invalid keys in a window is answered 429 without
 * another lookup until the window ends (remembered in this process; counted in the shared limiter).
 */
export class BadKeyGuard {
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly spec: LimitSpec,
    private readonly trustProxy: TrustProxy,
  ) {}

  /** Throws 429 when this address is over its invalid-key budget (before any lookup). */
  check(c: Context): void {
    if (this.blockedUntil.size === 0) return; // the usual case: no address lookup on a keyed request
    const ip = clientIp(c, this.trustProxy);
    const until = this.blockedUntil.get(ip);
    if (until === undefined) return;
    if (until <= Date.now()) {
      this.blockedUntil.delete(ip);
      return;
    }
    throw this.refusal(Math.ceil((until - Date.now()) / 1000));
  }

  /** Counts one invalid key; throws 429 when that was one too many. */
  async record(c: Context): Promise<void> {
    const ip = clientIp(c, this.trustProxy);
    let hit: Awaited<ReturnType<RateLimiter['hit']>>;
    try {
      hit = await this.limiter.hit(`badkey:${ip}`, this.spec.limit, this.spec.windowSeconds);
    } catch {
      return;
    }
    if (hit.allowed) return;
    if (this.blockedUntil.size > 100_000) this.blockedUntil.clear();
    this.blockedUntil.set(ip, Date.now() + hit.resetSeconds * 1000);
    throw this.refusal(hit.resetSeconds);
  }

  private refusal(retryAfter: number): ServiceError {
    return new ServiceError(
      'rate_limited',
      `Too many invalid API keys from this address: ${this.spec.limit} per ${this.spec.windowSeconds} s. Retry after ${retryAfter} s with a valid key.`,
      {
        limit_scope: 'invalid-keys-per-ip',
        limit: this.spec.limit,
        window_seconds: this.spec.windowSeconds,
        retry_after: retryAfter,
      },
      { 'retry-after': String(retryAfter) },
    );
  }
}

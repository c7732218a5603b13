import type { Context } from 'hono';
import type { RateLimiter } from '../access/rate-limiter.js';
import { DEFAULT_STATE_TIMEOUT_MS, StateUnavailableError } from '../access/state-deadline.js';
import { ServiceError } from '../core/errors.js';
import { clientIp, type LimitSpec, type TrustProxy } from './rate-limit.js';

/**
 * Invalid keys count against the client's address: each one costs a state-store lookup, so an
 * address that has sent its per-IP budget of invalid keys in a window is answered 429 for every
 * further invalid key until the window ends (remembered in this process; counted in the shared
 * limiter). A valid key from that address is still served: many clients may share one address
 * (NAT, a proxy), and a key cannot be told valid without a lookup, so the lookups go on, but one
 * at a time per over-budget address (it cannot take more than one state-store connection), and
 * never for a malformed key. A lookup waits its turn at most the state store's deadline, then
 * answers 503 `state_unavailable` (a stalled store must not turn the queue into a hang).
 */
export class BadKeyGuard {
  private readonly blockedUntil = new Map<string, number>();
  /** The last lookup queued for each over-budget address: the next one waits for it. */
  private readonly lookups = new Map<string, Promise<unknown>>();

  constructor(
    private readonly limiter: RateLimiter,
    private readonly spec: LimitSpec,
    private readonly trustProxy: TrustProxy,
    /** How long a lookup waits for the address's earlier ones (STATE_TIMEOUT_MS). */
    private readonly waitMs = DEFAULT_STATE_TIMEOUT_MS,
  ) {}

  /** The 429 for this address when it is over its invalid-key budget, else null. */
  refusalFor(c: Context): ServiceError | null {
    if (this.blockedUntil.size === 0) return null; // the usual case: no address lookup on a keyed request
    const ip = clientIp(c, this.trustProxy);
    const until = this.blockedUntil.get(ip);
    if (until === undefined) return null;
    if (until <= Date.now()) {
      this.blockedUntil.delete(ip);
      return null;
    }
    return this.refusal(Math.ceil((until - Date.now()) / 1000));
  }

  /** Runs a key lookup for an over-budget address after the ones it already has in flight. */
  oneAtATime<T>(c: Context, lookup: () => Promise<T>): Promise<T> {
    const ip = clientIp(c, this.trustProxy);
    const before = this.lookups.get(ip);
    const mine = (before ? this.turn(before) : Promise.resolve()).then(lookup);
    // The next lookup waits for this one, or, when this one gave up waiting, for the one before.
    const settled: Promise<unknown> = mine.then(
      () => undefined,
      () => before,
    );
    this.lookups.set(ip, settled);
    void settled.then(() => {
      if (this.lookups.get(ip) === settled) this.lookups.delete(ip);
    });
    return mine;
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

  /** Resolves when `before` has settled, or rejects with 503 after waitMs. */
  private turn(before: Promise<unknown>): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new StateUnavailableError('authenticate', `no turn within ${this.waitMs} ms`)),
        this.waitMs,
      );
      void before.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private refusal(retryAfter: number): ServiceError {
    return new ServiceError(
      'rate_limited',
      `Too many invalid API keys from this address: ${this.spec.limit} per ${this.spec.windowSeconds} s. Retry after ${retryAfter} s; a valid key is still served.`,
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

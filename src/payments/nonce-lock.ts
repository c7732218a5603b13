/**
 * One payment buys one answer: while a payment is being verified, answered and settled, its
 * authorization nonce is held, so the same payment sent twice at once is refused the second time.
 * In memory for one process; in Redis (SET NX PX) when replicas share REDIS_URL. The ledger's
 * unique index is the last guard either way.
 */
export interface NonceLock {
  /** True when the nonce was free and is now held for `ttlMs`. */
  acquire(key: string, ttlMs: number): Promise<boolean>;
  release(key: string): Promise<void>;
  close?(): Promise<void>;
}

export class MemoryNonceLock implements NonceLock {
  private readonly held = new Map<string, number>();
  private readonly now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
  }

  async acquire(key: string, ttlMs: number): Promise<boolean> {
    const now = this.now();
    const until = this.held.get(key);
    if (until !== undefined && until > now) return false;
    if (this.held.size > 10_000) for (const [k, t] of this.held) if (t <= now) this.held.delete(k);
    this.held.set(key, now + ttlMs);
    return true;
  }

  async release(key: string): Promise<void> {
    this.held.delete(key);
  }
}

/** The Redis commands the lock needs (ioredis has them). */
export interface RedisLike {
  set(key: string, value: string, px: 'PX', ttl: number, nx: 'NX'): Promise<string | null>;
  del(key: string): Promise<number>;
  quit(): Promise<unknown>;
  /** Drops the connection at once and stops reconnecting (quit refuses while Redis is unreachable). */
  disconnect(): void;
}

/** Redis when it answers; this process's memory when it does not (the ledger still guards replicas). */
export class RedisNonceLock implements NonceLock {
  private readonly local: MemoryNonceLock;

  /** `now`: the clock of the locks held in memory while Redis is away. */
  constructor(
    private readonly redis: RedisLike,
    options: { now?: () => number } = {},
  ) {
    this.local = new MemoryNonceLock(options);
  }

  async acquire(key: string, ttlMs: number): Promise<boolean> {
    if (!(await this.local.acquire(key, ttlMs))) return false;
    try {
      if ((await this.redis.set(`ri:x402:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK') return true;
      await this.local.release(key);
      return false;
    } catch {
      return true;
    }
  }

  async release(key: string): Promise<void> {
    await this.local.release(key);
    await this.redis.del(`ri:x402:${key}`).catch(() => 0);
  }

  /** Never throws: with Redis unreachable quit is refused, so the client is disconnected instead. */
  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}

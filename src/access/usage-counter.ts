import type { StateStore } from './state-store.js';

/** The month a call is counted in: YYYY-MM, UTC. */
export const monthOf = (d: Date): string => d.toISOString().slice(0, 7);

/**
 * Counts keyed calls per key and month for the account page. A write per request would double
 * the state store's load, so calls are counted in memory and added to the store in one batch
 * every few seconds (and on close); replicas add, never overwrite. A failed write keeps its
 * counts for the next flush, so an outage of the store delays counts but does not lose them.
 */
export class UsageCounter {
  private pending = new Map<string, Map<string, number>>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly state: Pick<StateStore, 'addUsage'>,
    private readonly options: { flushMs?: number; now?: () => Date } = {},
  ) {}

  /** The month of the last call and when it ends: most calls then need no date formatting. */
  private month = '';
  private monthEndsMs = 0;

  record(prefix: string): void {
    // A number, not a Date, on every call: a Date is made only when the month changes.
    const atMs = this.options.now?.().getTime() ?? Date.now();
    if (atMs >= this.monthEndsMs || atMs < this.monthEndsMs - 32 * 86_400_000) {
      const at = new Date(atMs);
      this.month = monthOf(at);
      this.monthEndsMs = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
    }
    const month = this.month;
    const counts = this.bucket(month);
    counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush().catch(() => undefined);
    }, this.options.flushMs ?? 5_000).unref();
  }

  /** Writes what has been counted so far; resolves when it is stored (flushes run one at a time). */
  flush(): Promise<void> {
    const run = this.flushing.then(async () => {
      const batch = this.pending;
      this.pending = new Map();
      for (const [month, counts] of batch) {
        try {
          await this.state.addUsage(month, counts);
          batch.delete(month);
        } catch (error) {
          // This month and the ones not yet written go back for the next flush.
          for (const [m, c] of batch) this.merge(m, c);
          throw error;
        }
      }
    });
    this.flushing = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private bucket(month: string): Map<string, number> {
    let counts = this.pending.get(month);
    if (!counts) {
      counts = new Map();
      this.pending.set(month, counts);
    }
    return counts;
  }

  private merge(month: string, counts: Map<string, number>): void {
    const into = this.bucket(month);
    for (const [prefix, n] of counts) into.set(prefix, (into.get(prefix) ?? 0) + n);
  }
}

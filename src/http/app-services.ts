import { MemoryRateLimiter, type RateLimiter } from '../access/rate-limiter.js';
import { UsageCounter } from '../access/usage-counter.js';
import { createLabService, type LabService } from '../core/lab-service.js';
import type { AppDeps } from './context.js';
import { createMetrics, type Metrics, watchLedger } from './metrics.js';

/**
 * What the app's parts share, made once per app from its dependencies: the log, the metrics, the
 * rate limiter, the usage counter, the lab service, and whether this server takes payments.
 */
export interface AppServices {
  log: NonNullable<AppDeps['log']>;
  metrics: Metrics;
  limiter: RateLimiter;
  usage: UsageCounter;
  /** Null in the older edition, which has no research, lab or payment endpoints (they answer 404). */
  lab: LabService | null;
  /** Pay per call (x402): only in the full edition and when a network is offered. */
  paymentsOn: boolean;
}

export function appServices(deps: AppDeps): AppServices {
  const metrics = deps.metrics ?? createMetrics();
  const payments = deps.payments;
  if (payments?.enabled) watchLedger(metrics, () => payments.mismatches);
  return {
    log: deps.log ?? (() => {}),
    metrics,
    limiter: deps.rateLimiter ?? new MemoryRateLimiter(),
    usage: deps.usage ?? new UsageCounter(deps.state),
    lab:
      deps.config.EDITION === 'full'
        ? createLabService({
            state: deps.state,
            ...(deps.workerPool ? { workerPool: deps.workerPool } : {}),
            ttlSeconds: deps.config.QUOTE_TTL_SECONDS,
            ...(deps.config.QUOTE_SECRET ? { quoteSecret: deps.config.QUOTE_SECRET } : {}),
            ...(deps.now ? { now: deps.now } : {}),
          })
        : null,
    paymentsOn: deps.config.EDITION === 'full' && deps.payments?.enabled === true,
  };
}

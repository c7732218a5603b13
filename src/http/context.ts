import type { Logger } from 'pino';
import type { Plan } from '../access/plans.js';
import type { RateLimiter } from '../access/rate-limiter.js';
import type { StateStore } from '../access/state-store.js';
import type { UsageCounter } from '../access/usage-counter.js';
import type { OperationCall } from '../calls/operation-call.js';
import type { Config } from '../config/config.js';
import type { Viewer } from '../core/viewer.js';
import type { WorkerPool } from '../core/worker-pool.js';
import type { PaymentService } from '../payments/payment-service.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';
import type { Mailer } from '../web/mailer.js';
import type { Metrics } from './metrics.js';
import type { RouteDeps } from './routes/shared.js';

/** Who is calling: no key (plan null) or a valid key with its account's current plan. */
export interface Caller {
  plan: Plan | null;
  keyPrefix: string | null;
  accountId: string | null;
  /** A per-call payer (x402): `plan` is the plan the operation needs, bought for this call only. */
  payer?: boolean;
  /** A feed token's account (token= on a feed's or a badge's URL): `plan` is its account's. */
  feedToken?: boolean;
}

/** What every request can reach through the Hono context. */
export type AppEnv = {
  Variables: {
    requestId: string;
    /** PUBLIC_URL: where problem types and pages live. */
    publicUrl: string;
    snapshot: Snapshot;
    caller: Caller;
    /** What the caller may see, as the core takes it: set by a route once its access check passed. */
    viewer: Viewer;
    /** The services a route needs (edition, public URL, lab, worker pool, snapshot folder): set with the viewer. */
    services: RouteDeps;
    /** Set for keyed callers; the rate limiter's per-key bucket. */
    apiKeyPrefix: string | undefined;
    /** Set by the payment gate on priced operations when payments are on. */
    payments: PaymentService | undefined;
    /** Set when this call is to be paid per call (x402). */
    payment: OperationCall | undefined;
  };
};

export interface AppDeps {
  config: Config;
  snapshots: SnapshotManager;
  state: StateStore;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** Request logs (pino JSON); none when absent. */
  logger?: Logger;
  /** Per key and per IP limits; in memory unless a Redis-backed limiter is given. */
  rateLimiter?: RateLimiter;
  metrics?: Metrics;
  /** Pay per call (x402); absent or with no network offered: payments are off. */
  payments?: PaymentService;
  /** The clock lab quotes are issued and checked by (tests move it). */
  now?: () => Date;
  /** Counts keyed calls per key and month; the app makes one when absent (flushed on close by its owner). */
  usage?: UsageCounter;
  /** Where research and lab answers are computed (`ri serve`: a worker pool); in this thread when absent. */
  workerPool?: WorkerPool;
  /** Sends the sign-in mail; from SMTP_URL when absent. */
  mailer?: Mailer;
}

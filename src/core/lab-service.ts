import { randomBytes } from 'node:crypto';
import type { LabDepth } from '../access/policy.js';
import type { StateStore } from '../access/state-store.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { ServiceError } from './errors.js';
import { requireExactlyOne } from './exactly-one.js';
import { checkQuote, type LabQuote, type LabRunAnswer, type QuoteSettings } from './lab.js';
import type { Viewer } from './viewer.js';
import { inThread, type WorkerPool } from './worker-pool.js';

/** What the lab needs besides a snapshot: where quotes are kept, the signing secret, the clock. */
interface LabServiceDeps {
  state: Pick<StateStore, 'saveQuote' | 'findQuote' | 'secret'>;
  /** QUOTE_SECRET; when unset, a random secret kept in the state store, shared by every replica. */
  quoteSecret?: string;
  ttlSeconds: number;
  now?: () => Date;
  /** Where quotes and runs are computed (a worker pool in `ri serve`); in this thread when absent. */
  workerPool?: WorkerPool;
}

interface QuoteOptions {
  /** Runs once the quote is known to be good, before it is kept (per-call payment). */
  pay?: () => Promise<void>;
  /** False for a request that only looks (HEAD): the quote is computed, not stored. */
  keep?: boolean;
}

export type LabRunRequest = { quoteId: string } | { quote: Record<string, unknown> };

/** The quote asked for with the lab run's parameters (contracts/lab.ts): by its quote_id or whole. */
export function labRunRequest(
  f: { quote_id?: string | undefined; quote?: Record<string, unknown> | undefined },
  where = '',
): LabRunRequest {
  requireExactlyOne({ quote_id: f.quote_id, quote: f.quote }, `'quote_id' or 'quote'${where}`);
  return f.quote ? { quote: f.quote } : { quoteId: f.quote_id! };
}

export interface LabService {
  /**
   * A binding quote for a filter, kept in the state store for runs by quote_id. `pay`, when
   * given, runs once the quote is known to be good and before it is kept (an unusable query is
   * refused before any payment is asked; an unpaid quote is never stored).
   */
  quote(snapshot: Snapshot, input: string, viewer: Viewer, options?: QuoteOptions): Promise<LabQuote>;
  /**
   * A quote's papers at a depth, by quote_id or with the whole quote. The quote's refusals
   * (unknown, edited, expired, stale, licence) come first; then `pay` is asked for the run price
   * (the depth's quoted price minus what the quote cost), then the papers are computed.
   * `paidBefore`: the call carries a payment the ledger already holds (a retry after a lost or
   * pending answer); its quote's expiry was checked when it was paid, and `pay` still refuses it
   * unless it is this very request.
   */
  run(
    snapshot: Snapshot,
    request: LabRunRequest,
    depth: LabDepth,
    viewer: Viewer,
    pay: (usd: number) => Promise<void>,
    paidBefore?: boolean,
  ): Promise<LabRunAnswer>;
}

/** The lab as every front door (REST, MCP) uses it: quoting stores the quote, a run checks it first. */
export function createLabService(deps: LabServiceDeps): LabService {
  const workerPool = deps.workerPool ?? inThread;
  let secret: Promise<string> | null = null;
  const settings = async (): Promise<QuoteSettings> => {
    secret ??= deps.quoteSecret
      ? Promise.resolve(deps.quoteSecret)
      : deps.state.secret('quote_signing', () => randomBytes(32).toString('base64url'));
    try {
      return { secret: await secret, ttlSeconds: deps.ttlSeconds, now: deps.now ?? (() => new Date()) };
    } catch (e) {
      secret = null; // a state store that was down is asked again next time
      throw e;
    }
  };
  return {
    async quote(snapshot, input, viewer, options = {}) {
      const { secret, ttlSeconds, now } = await settings();
      const quote = await workerPool.run<LabQuote>(snapshot, {
        kind: 'labQuote',
        input,
        viewer,
        secret,
        ttlSeconds,
        nowMs: now().getTime(),
      });
      await options.pay?.();
      if (options.keep === false) return quote;
      await deps.state.saveQuote({
        id: quote.quote_id,
        body: JSON.stringify(quote),
        expiresAt: quote.expires_at,
      });
      return quote;
    },
    async run(snapshot, request, depth, viewer, pay, paidBefore = false) {
      let body: Record<string, unknown>;
      if ('quote' in request) body = request.quote;
      else {
        const kept = await deps.state.findQuote(request.quoteId);
        if (kept === null) {
          throw new ServiceError(
            'unknown_quote',
            `No quote with id '${request.quoteId}': ask for one at /v1/lab/quote.`,
            {
              parameter: 'quote_id',
            },
          );
        }
        body = JSON.parse(kept) as Record<string, unknown>;
      }
      const quote = checkQuote(snapshot, body, depth, await settings(), paidBefore);
      const price = quote.deliverables[depth]!.run_price.usd;
      if (!(price > 0))
        throw new ServiceError('quote_edited', 'The quote names a price this service never quotes.');
      await pay(price);
      return workerPool.run<LabRunAnswer>(snapshot, { kind: 'labRun', quote, depth, viewer });
    },
  };
}

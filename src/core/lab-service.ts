import { randomBytes } from 'node:crypto';
import type { LabDepth } from '../access/policy.js';
import type { StateStore } from '../access/state-store.js';
import { type HeavyWork, inThread } from '../offload/heavy-work.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { ServiceError } from './errors.js';
import { checkQuote, type LabQuote, type LabRunAnswer, type QuoteSettings } from './lab.js';
import type { Viewer } from './viewer.js';

/** What the lab needs besides a snapshot: where quotes are kept, the signing secret, the clock. */
export interface LabServiceDeps {
  state: Pick<StateStore, 'saveQuote' | 'findQuote' | 'secret'>;
  /** QUOTE_SECRET; when unset, a random secret kept in the state store, shared by every replica. */
  quoteSecret?: string;
  ttlSeconds: number;
  now?: () => Date;
  /** Where quotes and runs are computed (a worker pool in `ri serve`); in this thread when absent. */
  heavy?: HeavyWork;
}

export interface QuoteOptions {
  /** Runs once the quote is known to be good, before it is kept (per-call payment). */
  pay?: () => Promise<void>;
  /** False for a request that only looks (HEAD): the quote is computed, not stored. */
  keep?: boolean;
}

export type LabRunRequest = { quoteId: string } | { quote: Record<string, unknown> };

export interface LabService {
  /**
   * A binding quote for a filter, kept in the state store for runs by quote_id. `pay`, when
   * given, runs once the quote is known to be good and before it is kept (an unusable query is
   * refused before any payment is asked; an unpaid quote is never stored).
   */
  quote(snapshot: Snapshot, input: string, viewer: Viewer, options?: QuoteOptions): Promise<LabQuote>;
  /** The refusals of a run (before any payment), by quote_id or with the whole quote. */
  check(snapshot: Snapshot, request: LabRunRequest, depth: LabDepth): Promise<LabQuote>;
  /** A checked quote's papers. */
  run(snapshot: Snapshot, quote: LabQuote, depth: LabDepth, viewer: Viewer): Promise<LabRunAnswer>;
}

/** The lab as every front door (REST, MCP) uses it: quoting stores the quote, a run checks it first. */
export function createLabService(deps: LabServiceDeps): LabService {
  const heavy = deps.heavy ?? inThread;
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
      const quote = await heavy.run<LabQuote>(snapshot, {
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
    async check(snapshot, request, depth) {
      let quote: Record<string, unknown>;
      if ('quote' in request) quote = request.quote;
      else {
        const body = await deps.state.findQuote(request.quoteId);
        if (body === null) {
          throw new ServiceError(
            'unknown_quote',
            `No quote with id '${request.quoteId}': ask for one at /v1/lab/quote.`,
            {
              parameter: 'quote_id',
            },
          );
        }
        quote = JSON.parse(body) as Record<string, unknown>;
      }
      return checkQuote(snapshot, quote, depth, await settings());
    },
    run: (snapshot, quote, depth, viewer) =>
      heavy.run<LabRunAnswer>(snapshot, { kind: 'labRun', quote, depth, viewer }),
  };
}

import type { SettleResponse } from '@x402/core/types';
import type { Plan } from '../access/plans.js';
import {
  type Edition,
  type Operation,
  priceOf,
  type RequestTerms,
  raisedBy,
  requestLevel,
} from '../access/policy.js';
import { accessRefusal } from '../access/refusal.js';
import { StateUnavailableError } from '../access/state-deadline.js';
import { ServiceError } from '../core/errors.js';
import { PaidCall, PaymentDemand, payerOf } from '../payments/paid-call.js';
import type { PaidResource, PaymentService } from '../payments/payment-service.js';
import { isCorruption, type Snapshot, type SnapshotManager } from '../snapshot/snapshot.js';
import { pinnedSnapshot } from './pinned-snapshot.js';
import { setAsideRefusal } from './set-aside.js';

/** What a call runs with: the snapshots, the edition, the payments this server takes. */
export interface CallDeps {
  snapshots: SnapshotManager;
  edition: Edition;
  publicUrl: string;
  /** Pay per call (x402), when this server takes it (enabled). */
  payments: PaymentService | undefined;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** One call as its door received it. */
export interface CallRequest {
  /** The payment sent with it (a PAYMENT-SIGNATURE header, an `_meta["x402/payment"]`), if any. */
  payment: unknown;
  /**
   * Its resolution and paper limit as the door's schema for it parsed them (they can raise the
   * level it needs, and price it); null when its parameters do not parse: it will be refused as
   * invalid, so no price is quoted for it.
   */
  terms: RequestTerms | null;
  /** How a refusal names what was asked ("GET /v1/research", "The tool research"). */
  what: string;
  /** How to ask again for an answer whose settlement is pending, in this door's words. */
  retry: string;
  /** What is paid for, on the snapshot that answers (null before it is known). */
  resource(snapshot: Snapshot | null): PaidResource;
}

/**
 * One call of an operation of the access table, the same for REST and MCP, in this order:
 * 1. who it goes as (its key's plan, or a payer on the plan the call needs) and whether it may
 *    (`refusal`);
 * 2. the snapshot it answers from (`pin`): the one a retried payment bought, else the version
 *    asked for, else the current one;
 * 3. the work, which calls `charge` once the call is known to be answerable (the x402 terms, or
 *    the payment verified and held);
 * 4. `finish`: a success is settled (the receipt), any other outcome released uncharged;
 * and what a fault becomes (`fault`). MCP runs the whole order with `run`. REST's middleware
 * calls the same phases (http/payment.ts, error-handling.ts), because its response cache sits
 * between the pin and the work and answers a repeated read without either.
 */
export class OperationCall {
  readonly plan: Plan | null;
  readonly payer: boolean;
  /** The payment part, for a payer on a server that takes payments. */
  readonly paid: PaidCall | null;
  /** The snapshot this call answers from, once pinned. */
  snapshot: Snapshot | null = null;

  constructor(
    private readonly deps: CallDeps,
    readonly op: Operation,
    plan: Plan | null,
    private readonly request: CallRequest,
  ) {
    const payments = deps.payments;
    const as = payerOf(
      op,
      plan,
      deps.edition,
      payments !== undefined,
      request.payment !== undefined,
      request.terms,
    );
    this.plan = as.plan;
    this.payer = as.payer;
    this.paid =
      as.payer && payments
        ? new PaidCall(
            payments,
            op,
            request.payment,
            this.price ?? null,
            () => request.resource(this.snapshot),
            request.retry,
          )
        : null;
  }

  /** The price of this exact request (undefined when its parameters do not parse); lab run prices by its quote. */
  get price(): number | null | undefined {
    const { terms } = this.request;
    return terms ? priceOf(this.op, terms.limit) : undefined;
  }

  /** What it asks for that can raise its level (resolution, kinds), as parsed. */
  get terms(): RequestTerms | null {
    return this.request.terms;
  }

  /** Whether a payment came with the call. */
  get paymentSent(): boolean {
    return this.request.payment !== undefined;
  }

  /** 1. The refusal of a caller below what this exact call needs (401, 403 with the price), or null. */
  refusal(): ServiceError | null {
    const { op, request, deps, terms } = this;
    const level = requestLevel(op, terms);
    const raised = raisedBy(op, terms);
    return accessRefusal({ plan: this.plan, payer: this.payer }, level, {
      edition: deps.edition,
      publicUrl: deps.publicUrl,
      what: raised === null ? request.what : `${request.what} with ${raised}`,
      op,
      payments: deps.payments !== undefined,
      price: this.price,
    });
  }

  /**
   * 2. The snapshot, acquired: the one an earlier use of this very payment bought (a retry never
   * gets newer data), else `requested` (data_version), else the current one. `current` is one the
   * door already holds for the unpinned case (released here when a pin replaces it).
   */
  async pin(requested: string | null, current?: Snapshot): Promise<Snapshot> {
    const version = (await this.paid?.paidVersion()) ?? requested;
    if (version !== null && version !== current?.version) {
      const pinned = await pinnedSnapshot(this.deps.snapshots, version, this.deps.publicUrl);
      current?.release();
      this.snapshot = pinned;
    } else {
      const snapshot = current ?? this.deps.snapshots.acquire();
      if (!snapshot)
        throw new ServiceError(
          'data_unavailable',
          this.deps.snapshots.unavailable(),
          {},
          { 'retry-after': '1' },
        );
      this.snapshot = snapshot;
    }
    return this.snapshot;
  }

  /** Whether the payment sent was already used (a retry of this request, or a replay refused at charge). */
  async paidBefore(): Promise<boolean> {
    return (await this.paid?.paidBefore()) ?? false;
  }

  /** 3. Once the call is known to be answerable: the terms, or the payment verified and held. */
  async charge(usd?: number): Promise<void> {
    await this.paid?.charge(usd);
  }

  /** 4. A success settled (its receipt; a failed settlement is thrown), anything else released. */
  async finish(succeeded: boolean): Promise<SettleResponse | null> {
    if (!this.paid) return null;
    if (!succeeded) {
      await this.paid.release();
      return null;
    }
    try {
      return await this.paid.settle();
    } catch (e) {
      // The ledger failing while a payment is settled (a retry's settlement read back, a row
      // written late) may come after its money moved: the answer says how to get what was paid for.
      throw e instanceof StateUnavailableError ? e.whileSettling(this.request.retry) : e;
    }
  }

  /** What a fault becomes for the caller: see `callFault`. */
  fault(e: unknown, context: Record<string, unknown> = {}): ServiceError | PaymentDemand {
    return callFault(e, this.snapshot, this.deps, { operation: this.op.id, ...context });
  }

  /**
   * The whole call, in order: `prepare` parses the arguments once the caller may go on (and names
   * the data version they pin, if any); `work` computes the answer on the pinned snapshot and
   * calls `charge`. An answer whose snapshot was set aside meanwhile is not given (set-aside.ts).
   * The snapshot is released when `work`'s answer is made.
   */
  async run<I, T>(
    prepare: () => { input: I; version: string | null },
    work: (input: I, snapshot: Snapshot) => Promise<T>,
  ): Promise<CallOutcome<T>> {
    try {
      const refused = this.refusal();
      if (refused) throw refused;
      const { input, version } = prepare();
      const snapshot = await this.pin(version);
      const answer = await work(input, snapshot);
      const setAside = setAsideRefusal(snapshot);
      if (setAside) throw setAside;
      const receipt = await this.finish(true);
      return { answer, receipt };
    } catch (e) {
      await this.paid?.release();
      return { error: this.fault(e) };
    } finally {
      this.snapshot?.release();
    }
  }
}

/** A call's outcome: its answer and receipt, or what the caller is told instead. */
export type CallOutcome<T> =
  | { answer: T; receipt: SettleResponse | null; error?: undefined }
  | { error: ServiceError | PaymentDemand };

/**
 * A fault as the caller is told it: a ServiceError or a demand for payment as it is; a damaged
 * snapshot page as a temporary data error (the file is checked at once, and nothing is charged);
 * anything else logged, and an internal_error.
 */
export function callFault(
  e: unknown,
  snapshot: Snapshot | null | undefined,
  deps: Pick<CallDeps, 'snapshots' | 'log'>,
  context: Record<string, unknown> = {},
): ServiceError | PaymentDemand {
  if (e instanceof ServiceError || e instanceof PaymentDemand) return e;
  const error = e instanceof Error ? e : new Error(String(e));
  if (snapshot && isCorruption(error)) {
    deps.log?.('snapshot read failed', { err: error.message, data_version: snapshot.version, ...context });
    void deps.snapshots.suspect(snapshot, error);
    return new ServiceError(
      'data_unavailable',
      'The data snapshot could not be read; try again shortly.',
      {},
      { 'retry-after': '1' },
    );
  }
  deps.log?.('request failed', { err: error.message, stack: error.stack, ...context });
  return new ServiceError('internal_error', 'The service failed to answer; the error was logged.');
}

import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import type { PaymentRow } from '../access/payment-ledger.js';
import type { Plan } from '../access/plans.js';
import { type Edition, goesAsPayer, type Operation, payerPlan, type RequestTerms } from '../access/policy.js';
import { ServiceError } from '../core/errors.js';
import {
  type PaidResource,
  PaymentError,
  type PaymentService,
  settlementPendingProblem,
  type VerifiedPayment,
} from './payment-service.js';

/**
 * One priced call paid per call (x402), the same for REST and MCP, which differ only in where the
 * payment travels (a header, `_meta`) and how a demand for payment is written (a 402 with a
 * header, a tool result): who pays (`payerOf`), the version a retry bought (`paidVersion`), the
 * charge once the call is known to be answerable (`charge`: the terms, or the payment verified
 * and held), then `settle` after a successful answer or `release` after any other outcome.
 */
export class PaidCall {
  /** The payment verified and held by `charge`, until it is settled or released. */
  private verified: VerifiedPayment | undefined;
  /** The ledger's row of an earlier use of this very payment, looked up once. */
  private prior: Promise<PaymentRow | null> | undefined;

  constructor(
    private readonly service: PaymentService,
    readonly op: Operation,
    /** The payment sent (a PAYMENT-SIGNATURE header, an `_meta["x402/payment"]`), if any. */
    readonly payment: unknown,
    /** The price by the request alone (the paper tiers by their limit); lab run prices by its quote. */
    public usd: number | null,
    /** What is paid for, once the snapshot that answers is known. */
    private readonly resource: () => PaidResource,
    /** How to ask again for an answer whose settlement is pending, in this door's words. */
    private readonly retry: string,
  ) {}

  get held(): boolean {
    return this.verified !== undefined;
  }

  /** The data version an earlier use of this very payment bought: a retry answers from it. */
  async paidVersion(): Promise<string | null> {
    return (await this.priorUse())?.dataVersion ?? null;
  }

  /** Whether the ledger already holds this very payment: a retry (verify() checks it is of the same request). */
  async paidBefore(): Promise<boolean> {
    return (await this.priorUse()) !== null;
  }

  private priorUse(): Promise<PaymentRow | null> {
    if (this.payment === undefined) return Promise.resolve(null);
    this.prior ??= this.service.priorPayment(this.payment);
    return this.prior;
  }

  /**
   * Called once the call is known to be answerable (its own errors already thrown): with no
   * payment, a PaymentDemand with the terms; otherwise the payment is verified and held. `usd`
   * overrides the request's price (a lab run's quoted price).
   */
  async charge(usd?: number): Promise<void> {
    const price = usd ?? this.usd;
    if (price === null) throw new Error(`no price for ${this.op.id}`);
    this.usd = price;
    if (this.payment === undefined) throw await this.demand(price);
    try {
      this.verified = await this.service.verify(this.payment, price, this.resource());
    } catch (e) {
      throw await this.refusal(e, price);
    }
  }

  /** After a successful answer: the receipt; a pending or failed settlement is thrown as the answer. */
  async settle(): Promise<SettleResponse | null> {
    const v = this.verified;
    if (!v) return null;
    this.verified = undefined;
    try {
      return await this.service.settle(v);
    } catch (e) {
      throw await this.refusal(e, Number(v.requirements.amount) / 1e6);
    }
  }

  /** After any other outcome: the payment is let go, uncharged. */
  async release(): Promise<void> {
    const v = this.verified;
    this.verified = undefined;
    if (v) await this.service.release(v);
  }

  private async demand(usd: number, error?: PaymentError): Promise<PaymentDemand> {
    return new PaymentDemand(
      usd,
      await this.service.paymentRequired(usd, this.resource(), error?.reason),
      error,
    );
  }

  /** A payment error as the caller is told it: a problem (unavailable, pending, conflict) or the terms again. */
  private async refusal(e: unknown, usd: number): Promise<unknown> {
    if (!(e instanceof PaymentError)) return e;
    if (e.code === 'payment_unavailable')
      return new ServiceError(
        'payment_unavailable',
        `The payment could not be verified now (${e.reason}); nothing was charged. Try again shortly.`,
        {},
        { 'retry-after': '5' },
      );
    if (e.code === 'settlement_pending') return settlementPendingProblem(e, this.retry, { price_usd: usd });
    if (e.code === 'payment_id_conflict')
      return new ServiceError('payment_id_conflict', `${e.reason}. Nothing was charged.`);
    return this.demand(usd, e);
  }
}

/** A call that must be paid first: the x402 terms, and why an earlier payment was not taken. */
export class PaymentDemand extends Error {
  constructor(
    readonly usd: number,
    readonly terms: PaymentRequired,
    readonly error?: PaymentError,
  ) {
    super(error?.reason ?? 'payment required');
    this.name = 'PaymentDemand';
  }
}

/**
 * Who a call goes as: a caller whose plan covers it as itself; without a key (or with a payment
 * and a plan too low) as a payer on the plan the call needs, when this server takes payments.
 */
export function payerOf(
  op: Operation,
  plan: Plan | null,
  edition: Edition,
  payments: boolean,
  paymentSent: boolean,
  terms: RequestTerms | null | undefined,
): { plan: Plan | null; payer: boolean } {
  if (payments && goesAsPayer(op, plan, edition, paymentSent, terms))
    return { plan: payerPlan(op, edition, terms), payer: true };
  return { plan, payer: false };
}

import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { Context } from 'hono';
import { type Edition, goesAsPayer, type Operation, payerPlan, priceOf } from '../access/policy.js';
import { ServiceError } from '../core/errors.js';
import { PRICED_OPERATIONS } from '../payments/discovery.js';
import { NETWORKS } from '../payments/networks.js';
import {
  PaymentError,
  type PaymentService,
  settlementPendingProblem,
  type VerifiedPayment,
} from '../payments/payment-service.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';
import type { AppEnv } from './context.js';
import { pinnedSnapshot } from './data-version.js';
import type { Step } from './pipeline.js';
import { problemResponse } from './problem.js';

/**
 * Pay per call (x402) on REST. The gate runs before the response cache: for a priced operation
 * called with no key (or with a PAYMENT-SIGNATURE), it lets the route run as a payer on the plan
 * the operation needs. The route validates and answers its own errors first, then calls
 * `charge()`: with no payment that is the 402 with the terms; with one, the payment is verified
 * and held. After the route, a successful answer is settled (PAYMENT-RESPONSE) and any other
 * outcome releases the payment uncharged. A failed settlement replaces the answer with a 402.
 */
export interface PaymentContext {
  service: PaymentService;
  op: Operation;
  /** The PAYMENT-SIGNATURE header, when one was sent. */
  signature: string | undefined;
  /** The price by the request alone (the paper routes by their limit tier); lab run prices by its quote. */
  usd: number | null;
  publicUrl: string;
  verified?: VerifiedPayment;
}

/** Path templates of the priced operations as patterns over /v1 paths. */
const PRICED = PRICED_OPERATIONS.map((op) => ({
  op,
  pattern: new RegExp(`^/v1${op.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

export function pricedOperation(method: string, path: string): Operation | undefined {
  return PRICED.find((p) => p.op.method === method && p.pattern.test(path))?.op;
}

export function paymentGate(
  service: PaymentService,
  edition: Edition,
  publicUrl: string,
  snapshots: SnapshotManager,
): Step<Context<AppEnv>> {
  return {
    enter(c) {
      const op = pricedOperation(c.req.method, c.req.path);
      if (!op) return undefined;
      c.set('payments', service);
      const caller = c.get('caller');
      const signature = c.req.header('payment-signature');
      // A key whose plan covers the call is never asked to pay (a payment sent with it is ignored);
      // a key below the plan without a payment gets 403 plan_required (with the per-call price).
      const resolution = c.req.query('resolution');
      if (!goesAsPayer(op, caller.plan, edition, signature !== undefined, resolution)) return undefined;
      const limit = Number(c.req.query('limit') ?? 20);
      const payment: PaymentContext = {
        service,
        op,
        signature,
        usd: priceOf(op, Number.isFinite(limit) ? limit : 20),
        publicUrl,
      };
      c.set('payment', payment);
      c.set('caller', { ...caller, plan: payerPlan(op, edition, resolution), payer: true });
      return signature === undefined
        ? undefined
        : pinPaidVersion(c, service, signature, snapshots, publicUrl);
    },
    // Settled once the route has answered; any other outcome releases the payment uncharged.
    exit(c) {
      const payment = c.get('payment');
      return payment?.verified ? settle(c, service, payment, payment.verified) : undefined;
    },
  };
}

/**
 * A payment already used for this request is a retry: it is answered from the snapshot it paid for,
 * never from newer data (410 data_version_gone if that one is no longer kept).
 */
async function pinPaidVersion(
  c: Context<AppEnv>,
  service: PaymentService,
  signature: string,
  snapshots: SnapshotManager,
  publicUrl: string,
): Promise<undefined> {
  const prior = await service.priorPayment(signature);
  const current = c.get('snapshot') as Snapshot | undefined;
  if (!prior?.dataVersion || !current || current.version === prior.dataVersion) return undefined;
  const paidFor = await pinnedSnapshot(snapshots, prior.dataVersion, publicUrl);
  current.release();
  c.set('snapshot', paidFor);
  return undefined;
}

async function settle(
  c: Context<AppEnv>,
  service: PaymentService,
  payment: PaymentContext,
  verified: VerifiedPayment,
): Promise<void> {
  if (c.res.status >= 400 || c.error) {
    await service.release(verified);
    return;
  }
  try {
    const receipt = await service.settle(verified);
    c.res.headers.set('payment-response', encodePaymentResponseHeader(receipt));
  } catch (e) {
    if (!(e instanceof PaymentError)) throw e;
    c.res = problemResponse(c, await paymentProblem(c, payment, payment.usd ?? 0, e));
  }
}

/**
 * Called by a priced route once the request is known to be answerable (its own 4xx already
 * thrown): a no-op for a caller whose plan covers it; 402 with the terms when no payment was
 * sent; otherwise verifies and holds the payment. `usd` overrides the request's price (lab run).
 */
export async function charge(c: Context<AppEnv>, usd?: number): Promise<void> {
  const payment = c.get('payment');
  if (!payment) return;
  const price = usd ?? payment.usd;
  if (price === null) throw new Error(`no price for ${payment.op.id}`);
  payment.usd = price;
  if (payment.signature === undefined) throw await paymentProblem(c, payment, price);
  try {
    payment.verified = await payment.service.verify(payment.signature, price, paidResource(c, payment));
  } catch (e) {
    if (e instanceof PaymentError) throw await paymentProblem(c, payment, price, e);
    throw e;
  }
}

function paidResource(c: Context<AppEnv>, payment: PaymentContext) {
  const url = new URL(c.req.url);
  const { op, publicUrl } = payment;
  const snapshot = c.get('snapshot') as Snapshot | undefined;
  return {
    operation: op.id,
    url: `${publicUrl}${url.pathname}${url.search}`,
    description: op.description,
    ...(snapshot ? { dataVersion: snapshot.version } : {}),
  };
}

/** The answer to a call that is not (or could not be) paid: 402 with the terms, or 503 when the facilitator is away. */
async function paymentProblem(
  c: Context<AppEnv>,
  payment: PaymentContext,
  usd: number,
  error?: PaymentError,
): Promise<ServiceError> {
  if (error?.code === 'payment_unavailable') {
    return new ServiceError(
      'payment_unavailable',
      `The payment could not be verified now (${error.reason}); nothing was charged. Try again shortly.`,
      {},
      { 'retry-after': '5' },
    );
  }
  if (error?.code === 'settlement_pending') {
    return settlementPendingProblem(
      error,
      'Repeat this same request with the same PAYMENT-SIGNATURE header',
      {
        price_usd: usd,
      },
    );
  }
  if (error?.code === 'payment_id_conflict') {
    return new ServiceError('payment_id_conflict', `${error.reason}. Nothing was charged.`);
  }
  const { service, op } = payment;
  const terms = await service.paymentRequired(usd, paidResource(c, payment), error?.reason);
  const networks = terms.accepts.map((a) => a.network);
  const detail = error
    ? `The payment was not accepted: ${error.reason}. Nothing was charged.`
    : `${op.method} /v1${op.path} costs ${usd} USD per call without a key.`;
  return new ServiceError(
    error?.code ?? 'payment_required',
    `${detail} Pay with x402: sign the terms in the PAYMENT-REQUIRED header with an x402 client and repeat the request with a PAYMENT-SIGNATURE header; or send 'Authorization: Bearer <API_KEY>' with a key on the ${payerPlan(op, 'full', c.req.query('resolution'))} plan.`,
    {
      price_usd: usd,
      networks: networks.map((n) => Object.values(NETWORKS).find((x) => x.caip2 === n)?.label ?? n),
      accepts: terms.accepts,
      ...(error ? { reason: error.reason } : {}),
    },
    { 'payment-required': encodedTerms(terms) },
  );
}

/** Base64 of the terms, once per terms object (an unpaid URL's terms are kept: payment-service.ts). */
const ENCODED = new WeakMap<object, string>();
function encodedTerms(terms: Parameters<typeof encodePaymentRequiredHeader>[0]): string {
  let header = ENCODED.get(terms);
  if (header === undefined) {
    header = encodePaymentRequiredHeader(terms);
    ENCODED.set(terms, header);
  }
  return header;
}

/** A computed answer, once it is paid for (see charge): `c.json(await paid(c, answer), 200)`. */
export async function paid<T>(c: Context<AppEnv>, answer: T, usd?: number): Promise<T> {
  await charge(c, usd);
  return answer;
}

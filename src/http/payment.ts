import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { Context } from 'hono';
import { type Edition, type Operation, payerPlan, usdText } from '../access/policy.js';
import { OperationCall } from '../calls/operation-call.js';
import { ServiceError } from '../core/errors.js';
import { PRICED_OPERATIONS } from '../payments/discovery.js';
import { NETWORKS } from '../payments/networks.js';
import { PaymentDemand, payerOf } from '../payments/paid-call.js';
import type { PaidResource, PaymentService } from '../payments/payment-service.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';
import { canonicalJson } from '../util/canonical-json.js';
import type { AppEnv } from './context.js';
import type { Middleware } from './middleware.js';
import { problemResponse } from './problem.js';
import { requestTerms } from './request-terms.js';

/**
 * Pay per call (x402) on REST, through the operation runner MCP uses too (calls/operation-call.ts). The gate
 * runs before the response cache: for a priced operation called with no key (or with a
 * PAYMENT-SIGNATURE), it lets the route run as a payer on the plan the operation needs. The route
 * validates and answers its own errors first, then calls `charge()`: with no payment that is the
 * 402 with the terms; with one, the payment is verified and held. After the route, a successful
 * answer is settled (PAYMENT-RESPONSE) and any other outcome releases the payment uncharged. A
 * failed settlement replaces the answer with a 402. The call is kept in the request context
 * (`payment`) between the gate and the route.
 */

/** Path templates of the priced operations as patterns over /v1 paths. */
const PRICED = PRICED_OPERATIONS.map((op) => ({
  op,
  pattern: new RegExp(`^/v1${op.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

/** The priced operation a request calls; a HEAD calls its GET's (RFC 9110 9.3.2: GET without the body). */
export function pricedOperation(method: string, path: string): Operation | undefined {
  const asked = method === 'HEAD' ? 'GET' : method;
  return PRICED.find((p) => p.op.method === asked && p.pattern.test(path))?.op;
}

export function paymentGate(
  service: PaymentService,
  edition: Edition,
  publicUrl: string,
  snapshots: SnapshotManager,
): Middleware<Context<AppEnv>> {
  const deps = { snapshots, edition, publicUrl, payments: service };
  return {
    enter(c) {
      const op = pricedOperation(c.req.method, c.req.path);
      if (!op) return undefined;
      c.set('payments', service);
      const caller = c.get('caller');
      // A HEAD is never paid (it delivers nothing): a payment sent with one is ignored, and it is
      // answered as the same GET without one (its 402 states the terms).
      const signature = c.req.method === 'HEAD' ? undefined : c.req.header('payment-signature');
      // A key without a payment goes as itself (below the plan: 403 plan_required, with the
      // per-call price). Decided before any object is made: most priced calls (keyed cached
      // reads) go on as they are.
      if (caller.plan !== null && signature === undefined) return undefined;
      // The resolution and limit as the route will parse them (a query that does not parse is
      // the route's 400, before any charge); a key whose plan covers the call is never asked to
      // pay (a payment sent with it is ignored).
      const terms = requestTerms(c, op);
      if (!payerOf(op, caller.plan, edition, true, signature !== undefined, terms).payer) return undefined;
      const call = new OperationCall(deps, op, caller.plan, {
        payment: signature,
        terms,
        what: `${op.method} /v1${op.path}`,
        retry: 'Repeat this same request with the same PAYMENT-SIGNATURE header',
        resource: () => paidResource(c, op, publicUrl),
      });
      c.set('payment', call);
      c.set('caller', { ...caller, plan: call.plan, payer: true });
      if (signature === undefined) return undefined;
      // A payment already used for this request is a retry: it is answered from the snapshot it
      // paid for, never from newer data (410 data_version_gone if that one is no longer kept).
      return call.pin(null, c.get('snapshot') as Snapshot).then((snapshot) => {
        c.set('snapshot', snapshot);
        return undefined;
      });
    },
    // Settled once the route has answered; any other outcome releases the payment uncharged.
    exit(c) {
      const call = c.get('payment');
      return call?.paid?.held ? settle(c, call) : undefined;
    },
  };
}

async function settle(c: Context<AppEnv>, call: OperationCall): Promise<void> {
  try {
    const receipt = await call.finish(c.res.status < 400 && !c.error);
    if (receipt) c.res.headers.set('payment-response', encodePaymentResponseHeader(receipt));
  } catch (e) {
    const problem = refusalProblem(call, e);
    if (!(problem instanceof ServiceError)) throw problem;
    c.res = problemResponse(c, problem);
  }
}

/**
 * Called by a priced route once the request is known to be answerable (its own 4xx already
 * thrown): a no-op for a caller whose plan covers it; 402 with the terms when no payment was
 * sent; otherwise verifies and holds the payment. `usd` overrides the request's price (lab run).
 */
export async function charge(c: Context<AppEnv>, usd?: number): Promise<void> {
  const call = c.get('payment');
  if (!call) return;
  try {
    await call.charge(usd);
  } catch (e) {
    throw refusalProblem(call, e);
  }
}

function paidResource(c: Context<AppEnv>, op: Operation, publicUrl: string): PaidResource {
  const url = new URL(c.req.url);
  const snapshot = c.get('snapshot') as Snapshot | undefined;
  const target = `${publicUrl}${url.pathname}${url.search}`;
  return {
    operation: op.id,
    url: target,
    description: op.description,
    // A POST asks in its body (the lab's query, quote and depth): the payment buys that body too,
    // so the same payment with another body is a replay, not a retry. The route has parsed it.
    ...(op.method === 'POST' ? { request: `POST ${target} ${canonicalJson(postBody(c))}` } : {}),
    ...(snapshot ? { dataVersion: snapshot.version } : {}),
  };
}

/** The JSON body as the route validated it (a priced POST is charged only after that). */
function postBody(c: Context<AppEnv>): unknown {
  const body = (c.req as unknown as { valid(target: 'json'): unknown }).valid('json');
  if (body === undefined) throw new Error('a priced POST was charged before its body was validated');
  return body;
}

/** A refused or unpaid call as REST answers it: a demand for payment is a 402 with the terms. */
function refusalProblem(call: OperationCall, e: unknown): unknown {
  if (!(e instanceof PaymentDemand)) return e;
  const { op } = call;
  const { terms, usd, error } = e;
  const networks = terms.accepts.map((a) => a.network);
  const detail = error
    ? `The payment was not accepted: ${error.reason}.${error.nothingCharged ? ' Nothing was charged.' : ''}`
    : `${op.method} /v1${op.path} costs ${usdText(usd)} per call without a key.`;
  return new ServiceError(
    error?.code ?? 'payment_required',
    `${detail} Pay with x402: sign the terms in the PAYMENT-REQUIRED header with an x402 client and repeat the request with a PAYMENT-SIGNATURE header; or send 'Authorization: Bearer <API_KEY>' with a key on the ${payerPlan(op, 'full', call.terms)} plan.`,
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

import type { Context } from 'hono';
import {
  type AccessLevel,
  type Edition,
  type Operation,
  operation,
  priceOf,
  RESOLUTION_ACCESS,
  type Resolution,
  requestLevel,
} from '../access/policy.js';
import { accessRefusal } from '../access/refusal.js';
import { type Viewer, viewerFor } from '../core/viewer.js';
import type { AppEnv } from './context.js';
import { pricedOperation } from './payment.js';
import { requestTerms } from './request-terms.js';

/** Refuses a caller below the level: 401 without a key, 403 plan_required with a plan too low. */
export function checkAccess(
  c: Context<AppEnv>,
  level: AccessLevel,
  edition: Edition,
  publicUrl: string,
  what: string,
  op?: Operation,
): void {
  const caller = c.get('caller');
  const ctx = { edition, publicUrl, what, payments: Boolean(c.get('payments')), ...(op ? { op } : {}) };
  if (accessRefusal(caller, level, ctx) === null) return;
  // Refused: the per-call price it names is that of this exact request, as its route parses the
  // query; none for a query that does not parse (paid, it would be refused as invalid).
  let price: number | null | undefined = null;
  if (op && ctx.payments) {
    const terms = requestTerms(c, op);
    price = terms ? priceOf(op, terms.limit) : undefined;
  }
  throw accessRefusal(caller, level, { ...ctx, price });
}

/** A history resolution above the caller's plan (RESOLUTION_ACCESS): 401 or 403 naming it. */
export function checkResolution(c: Context<AppEnv>, resolution: Resolution): void {
  const { edition, publicUrl } = c.get('services');
  // A priced history says its per-call price in the refusal: a payment buys this resolution too.
  const op = pricedOperation(c.req.method, c.req.path);
  checkAccess(c, RESOLUTION_ACCESS[resolution], edition, publicUrl, `resolution=${resolution}`, op);
}

/**
 * The kinds of subject whose changes are asked for, above the caller's plan (KIND_ACCESS: topics
 * and keywords from Personal): 401 or 403 naming them, with the call's per-call price.
 */
export function checkKinds(c: Context<AppEnv>, kinds: readonly string[]): void {
  const { edition, publicUrl } = c.get('services');
  const op = operation('listChanges');
  checkAccess(c, requestLevel(op, { kinds }), edition, publicUrl, `kind=${kinds.join(',')}`, op);
}

/** The caller as the core sees it. */
export function viewerOf(c: Context<AppEnv>, edition: Edition, publicUrl: string): Viewer {
  return viewerFor(c.get('caller').plan, edition, publicUrl);
}

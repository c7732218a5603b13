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
import { ServiceError } from '../core/errors.js';
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

/**
 * A feed above the caller (feedLevel): 401 authentication_required without a feed token (or a
 * key), 403 plan_required with one whose account's plan is too low, each saying how a feed
 * reader gets in: token= in the URL, never the API key.
 */
export function checkFeed(
  c: Context<AppEnv>,
  level: AccessLevel,
  edition: Edition,
  publicUrl: string,
  what: string,
): void {
  const caller = c.get('caller');
  const refusal = accessRefusal(caller, level, { edition, publicUrl, what });
  if (refusal === null) return;
  const plan = String(refusal.extra.required_plan);
  const named = `${plan.charAt(0).toUpperCase()}${plan.slice(1)}`;
  const how = `Feed readers and <img> tags send no header, so the token goes in the URL: add token=<FEED_TOKEN>, a feed token made on ${publicUrl}/account by an account on the ${named} plan (an API key never goes in a URL).`;
  throw new ServiceError(
    refusal.code as 'authentication_required' | 'plan_required',
    refusal.code === 'authentication_required'
      ? `${what} needs a feed token. ${how}`
      : `${what} needs the ${named} plan; this ${caller.feedToken ? "feed token's account" : 'key'} is on the ${caller.plan} plan.`,
    refusal.extra,
    refusal.headers,
  );
}

/** The caller as the core sees it. */
export function viewerOf(c: Context<AppEnv>, edition: Edition, publicUrl: string): Viewer {
  return viewerFor(c.get('caller').plan, edition, publicUrl);
}

import type { Context } from 'hono';
import {
  type AccessLevel,
  DEFAULT_PAPER_LIMIT,
  type Edition,
  type Operation,
  priceOf,
  RESOLUTION_ACCESS,
  type Resolution,
} from '../access/policy.js';
import { accessRefusal } from '../access/refusal.js';
import { type Viewer, viewerFor } from '../core/viewer.js';
import type { AppEnv } from './context.js';
import { pricedOperation } from './payment.js';

/** Refuses a caller below the level: 401 without a key, 403 plan_required with a plan too low. */
export function checkAccess(
  c: Context<AppEnv>,
  level: AccessLevel,
  edition: Edition,
  publicUrl: string,
  what: string,
  op?: Operation,
): void {
  const payments = Boolean(c.get('payments'));
  const price = op && payments ? priceOf(op, Number(c.req.query('limit') ?? DEFAULT_PAPER_LIMIT)) : null;
  const refusal = accessRefusal(c.get('caller'), level, {
    edition,
    publicUrl,
    what,
    payments,
    price,
    ...(op ? { op } : {}),
  });
  if (refusal) throw refusal;
}

/** A history resolution above the caller's plan (RESOLUTION_ACCESS): 401 or 403 naming it. */
export function checkResolution(c: Context<AppEnv>, resolution: Resolution): void {
  const { edition, publicUrl } = c.get('services');
  // A priced history says its per-call price in the refusal: a payment buys this resolution too.
  const op = pricedOperation(c.req.method, c.req.path);
  checkAccess(c, RESOLUTION_ACCESS[resolution], edition, publicUrl, `resolution=${resolution}`, op);
}

/** The caller as the core sees it. */
export function viewerOf(c: Context<AppEnv>, edition: Edition, publicUrl: string): Viewer {
  return viewerFor(c.get('caller').plan, edition, publicUrl);
}

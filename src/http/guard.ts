import type { Context } from 'hono';
import { type AccessLevel, type Edition, type Operation, priceOf } from '../access/policy.js';
import { accessRefusal } from '../access/refusal.js';
import { type Viewer, viewerFor } from '../core/viewer.js';
import type { AppEnv } from './context.js';

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
  const price = op && payments ? priceOf(op, Number(c.req.query('limit') ?? 20)) : null;
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

/** The caller as the core sees it. */
export function viewerOf(c: Context<AppEnv>, edition: Edition, publicUrl: string): Viewer {
  return viewerFor(c.get('caller').plan, edition, publicUrl);
}

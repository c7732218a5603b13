import type { Context, MiddlewareHandler } from 'hono';
import {
  type AccessLevel,
  type Edition,
  HRI_ACCESS,
  type Operation,
  type OperationId,
  operation,
  planAllows,
  priceOf,
  requiredPlan,
} from '../access/policy.js';
import { ServiceError } from '../core/errors.js';
import type { Viewer } from '../core/viewer.js';
import type { AppEnv } from './context.js';

const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="research-intensity"' };

/** Refuses a caller below the level: 401 without a key, 403 plan_required with a plan too low. */
export function checkAccess(
  c: Context<AppEnv>,
  level: AccessLevel,
  edition: Edition,
  publicUrl: string,
  what: string,
  op?: Operation,
): void {
  if (level === 'public') return;
  const caller = c.get('caller');
  // Priced without a key, on a server that takes per-call payments: the payment gate handles it.
  const price = op && c.get('payments') ? priceOf(op, Number(c.req.query('limit') ?? 20)) : null;
  if (caller.plan === null) {
    throw new ServiceError(
      'authentication_required',
      `${what} needs an API key: send 'Authorization: Bearer <API_KEY>'. Create a free key at ${publicUrl}/account.` +
        (op && op.prices.length + (op.pricedByQuote ? 1 : 0) > 0
          ? ' This server takes no per-call payment.'
          : ''),
      {
        required_plan: level === 'key' ? 'free' : requiredPlan(level, edition),
        upgrade_url: `${publicUrl}/pricing`,
      },
      WWW_AUTHENTICATE,
    );
  }
  if (level === 'key' || planAllows(caller.plan, level, edition)) return;
  const needed = requiredPlan(level, edition);
  const payable = op && c.get('payments') && (price !== null || op.pricedByQuote);
  throw new ServiceError(
    'plan_required',
    caller.payer
      ? `${what} needs the ${capitalise(needed)} plan; a per-call payment for this endpoint does not include it.`
      : `${what} needs the ${capitalise(needed)} plan; this key is on the ${capitalise(caller.plan)} plan.` +
          (payable
            ? ` The call can also be paid per call without a key (x402): ${price !== null ? `${price} USD` : 'the quoted price of the depth minus 0.01 USD'}.`
            : ''),
    {
      required_plan: needed,
      current_plan: caller.payer ? null : caller.plan,
      upgrade_url: `${publicUrl}/pricing`,
      ...(payable ? { price_usd: price, pay_per_call: true } : {}),
    },
  );
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Route middleware: the operation's access level from the policy table. */
export function requireAccess(
  id: OperationId,
  edition: Edition,
  publicUrl: string,
): MiddlewareHandler<AppEnv> {
  const op = operation(id);
  return async (c, next) => {
    checkAccess(c, op.access, edition, publicUrl, `${op.method} /v1${op.path}`, op);
    await next();
  };
}

/** The caller as the core sees it. */
export function viewerOf(c: Context<AppEnv>, edition: Edition, publicUrl: string): Viewer {
  const plan = c.get('caller').plan;
  return { hriAvailable: plan !== null && planAllows(plan, HRI_ACCESS, edition), publicUrl };
}

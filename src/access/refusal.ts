import { ServiceError } from '../core/errors.js';
import type { Plan } from './plans.js';
import {
  type AccessLevel,
  type Edition,
  isPriced,
  LAB_QUOTE_USD,
  type Operation,
  planAllows,
  requiredPlan,
  usdText,
} from './policy.js';

const WWW_AUTHENTICATE = { 'www-authenticate': 'Bearer realm="research-intensity"' };

/** Who is asking, as the access rules see it (the same for REST and MCP). */
export interface AccessCaller {
  plan: Plan | null;
  /** A per-call payer: `plan` is what the payment stands for. */
  payer?: boolean;
}

export interface AccessContext {
  edition: Edition;
  publicUrl: string;
  /** What is being asked for, in the message ("GET /v1/research", "tool research", "resolution=monthly"). */
  what: string;
  /** The priced operation, when the level is an operation's own. */
  op?: Operation;
  /**
   * The per-call price of this request when this server takes payments: null for the quoted
   * price of a lab depth; undefined when none can be quoted (its parameters do not parse, so a
   * paid call would be refused as invalid).
   */
  price?: number | null | undefined;
  /** Whether this server takes per-call payments. */
  payments?: boolean;
}

/**
 * The refusal for a caller below a level, or null when the caller may go on: 401
 * authentication_required without a key, 403 plan_required with a plan too low (giving the
 * per-call price when the call can be paid without a key).
 */
export function accessRefusal(
  caller: AccessCaller,
  level: AccessLevel,
  ctx: AccessContext,
): ServiceError | null {
  if (level === 'public') return null;
  const { edition, publicUrl, what, op } = ctx;
  const priced = op !== undefined && isPriced(op);
  if (caller.plan === null) {
    return new ServiceError(
      'authentication_required',
      `${what} needs an API key: send 'Authorization: Bearer <API_KEY>'. Get a key: ${publicUrl}/account.` +
        (priced && !ctx.payments ? ' This server takes no per-call payment.' : ''),
      {
        required_plan: level === 'key' ? 'free' : requiredPlan(level, edition),
        upgrade_url: `${publicUrl}/pricing`,
      },
      WWW_AUTHENTICATE,
    );
  }
  if (level === 'key' || planAllows(caller.plan, level, edition)) return null;
  const needed = requiredPlan(level, edition);
  const price = ctx.price ?? null;
  const payable = priced && ctx.payments === true && ctx.price !== undefined;
  return new ServiceError(
    'plan_required',
    caller.payer
      ? `${what} needs the ${capitalise(needed)} plan; a per-call payment for this endpoint does not include it.`
      : `${what} needs the ${capitalise(needed)} plan; this key is on the ${capitalise(caller.plan)} plan.` +
          (payable
            ? ` The call can also be paid per call without a key (x402): ${price !== null ? usdText(price) : `the quoted price of the depth minus ${usdText(LAB_QUOTE_USD)}`}.`
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

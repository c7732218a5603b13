import type { Context, MiddlewareHandler } from 'hono';
import {
  type AccessLevel,
  type Edition,
  HRI_ACCESS,
  type OperationId,
  operation,
  planAllows,
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
): void {
  if (level === 'public') return;
  const caller = c.get('caller');
  if (caller.plan === null) {
    throw new ServiceError(
      'authentication_required',
      `${what} needs an API key: send 'Authorization: Bearer <API_KEY>'. Create a free key at ${publicUrl}/account.`,
      {
        required_plan: level === 'key' ? 'free' : requiredPlan(level, edition),
        upgrade_url: `${publicUrl}/pricing`,
      },
      WWW_AUTHENTICATE,
    );
  }
  if (level === 'key' || planAllows(caller.plan, level, edition)) return;
  const needed = requiredPlan(level, edition);
  throw new ServiceError(
    'plan_required',
    `${what} needs the ${capitalise(needed)} plan; this key is on the ${capitalise(caller.plan)} plan.`,
    {
      required_plan: needed,
      current_plan: caller.plan,
      upgrade_url: `${publicUrl}/pricing`,
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
    checkAccess(c, op.access, edition, publicUrl, `${op.method} /v1${op.path}`);
    await next();
  };
}

/** The caller as the core sees it. */
export function viewerOf(c: Context<AppEnv>, edition: Edition, publicUrl: string): Viewer {
  const plan = c.get('caller').plan;
  return { hriAvailable: plan !== null && planAllows(plan, HRI_ACCESS, edition), publicUrl };
}

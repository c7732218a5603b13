import type { Context } from 'hono';
import { parseApiKey } from '../access/api-keys.js';
import { parseFeedToken } from '../access/feed-tokens.js';
import type { KeyInfo, StateStore } from '../access/state-store.js';
import type { UsageCounter } from '../access/usage-counter.js';
import { ServiceError } from '../core/errors.js';
import type { BadKeyGuard } from './bad-keys.js';
import type { AppEnv, Caller } from './context.js';
import type { Middleware } from './middleware.js';

/** A store that can tell a key it already looked up without waiting (sqlite-state-store.ts). */
interface KnownKeys {
  knownKey(key: string): KeyInfo | undefined;
}

/** Where token= is read: the feeds and the badges, and no other route (a feed token opens them only). */
const TOKEN_PATHS = ['/v1/feeds/', '/v1/badges/'];

const ANONYMOUS: Caller = { plan: null, keyPrefix: null, accountId: null };

/**
 * Reads the bearer key, if any, and sets the caller. A key that is sent but malformed, unknown
 * or revoked is refused with 401 invalid_key on every route (a silent downgrade to anonymous
 * would hide the mistake). The key itself is never logged or echoed. Each keyed call is counted
 * for its key's monthly usage (the account page). A valid key is never refused for invalid keys
 * sent by others from its address (bad-keys.ts).
 */
export function authenticate(
  state: StateStore,
  badKeys?: BadKeyGuard,
  usage?: UsageCounter,
): Middleware<Context<AppEnv>> {
  const known = (state as Partial<KnownKeys>).knownKey?.bind(state);
  const accept = (c: Context<AppEnv>, info: KeyInfo): undefined => {
    usage?.record(info.prefix);
    c.set('caller', { plan: info.plan, keyPrefix: info.prefix, accountId: info.accountId });
    c.set('apiKeyPrefix', info.prefix);
    return undefined;
  };
  const lookUp = async (c: Context<AppEnv>, m: RegExpExecArray | null): Promise<undefined> => {
    // An address over its invalid-key budget (bad-keys.ts): its keys are still looked up, so a
    // valid key of a client sharing the address is served, but one at a time; a malformed key
    // can never be valid, so it costs no lookup; an unknown key gets the 429, not a 401.
    const refusal = badKeys?.refusalFor(c) ?? null;
    if (refusal && !(m && parseApiKey(m[1]!))) throw refusal;
    const info = m
      ? await (refusal ? badKeys!.oneAtATime(c, () => state.authenticate(m[1]!)) : state.authenticate(m[1]!))
      : null;
    if (!info) {
      if (refusal) throw refusal;
      await badKeys?.record(c);
      throw new ServiceError(
        'invalid_key',
        m
          ? 'The API key is not valid: it is unknown or has been revoked.'
          : "The Authorization header must be 'Bearer <API_KEY>'.",
        {},
        { 'www-authenticate': 'Bearer realm="research-intensity", error="invalid_token"' },
      );
    }
    return accept(c, info);
  };
  // A feed token (feed-tokens.ts), on a feed's or a badge's URL only: refused like a bad key, counted against
  // the address's invalid-key budget, rate limited under its own prefix, and never logged (the
  // request log writes the path, not the query).
  const feedToken = async (c: Context<AppEnv>, token: string): Promise<undefined> => {
    const refusal = badKeys?.refusalFor(c) ?? null;
    const wellFormed = parseFeedToken(token) !== null;
    if (refusal && !wellFormed) throw refusal;
    const info = wellFormed
      ? await (refusal
          ? badKeys!.oneAtATime(c, () => state.authenticateFeedToken(token))
          : state.authenticateFeedToken(token))
      : null;
    if (!info) {
      if (refusal) throw refusal;
      await badKeys?.record(c);
      throw new ServiceError(
        'invalid_feed_token',
        parseApiKey(token)
          ? 'token= takes a feed token, never an API key: an API key in a URL is kept by every proxy and reader that sees it. Make a feed token on /account (and revoke that key if the URL was shared).'
          : 'The feed token is not valid: it is unknown or has been revoked. Make a new one on /account.',
        { parameter: 'token' },
        // A 401 names a scheme (RFC 9110): a feed also takes the bearer key.
        { 'www-authenticate': 'Bearer realm="research-intensity", error="invalid_token"' },
      );
    }
    c.set('caller', { plan: info.plan, keyPrefix: null, accountId: info.accountId, feedToken: true });
    c.set('apiKeyPrefix', `feed_${info.prefix}`);
    return undefined;
  };
  const keyed = (c: Context<AppEnv>, header: string): undefined | Promise<undefined> => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    // A key the store knows without a query (its memory of lookups): no promise to wait for.
    const info = m && known ? known(m[1]!) : undefined;
    return info ? accept(c, info) : lookUp(c, m);
  };
  return {
    enter(c) {
      const header = c.req.header('authorization');
      const path = c.req.path;
      const token = TOKEN_PATHS.some((p) => path.startsWith(p)) ? c.req.query('token') : undefined;
      if (token !== undefined) {
        if (header)
          throw new ServiceError(
            'invalid_parameter',
            'Send a feed token (token=) or an Authorization header, not both.',
            { parameter: 'token' },
          );
        return feedToken(c, token);
      }
      if (header) return keyed(c, header);
      c.set('caller', ANONYMOUS);
      c.set('apiKeyPrefix', undefined);
      return undefined;
    },
  };
}

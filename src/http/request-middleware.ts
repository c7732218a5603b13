import type { Context, ErrorHandler, MiddlewareHandler } from 'hono';
import type { Plan } from '../access/plans.js';
import { PLAN_RATE_LIMITS } from '../access/policy.js';
import { pinnedSnapshot } from '../calls/pinned-snapshot.js';
import { setAsideRefusal } from '../calls/set-aside.js';
import { ServiceError } from '../core/errors.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { securityHeaders } from '../web/security-headers.js';
import type { AppServices } from './app-services.js';
import { authenticate } from './auth.js';
import { BadKeyGuard } from './bad-keys.js';
import { boundedBody } from './body-limit.js';
import type { AppDeps, AppEnv, Caller } from './context.js';
import { cors } from './cors.js';
import { requestedVersion } from './data-version.js';
import { compression } from './fast-path/compression.js';
import type { FastPathRun } from './fast-path/handoff.js';
import { responseCache } from './fast-path/response-cache.js';
import { unpaidCache } from './fast-path/unpaid-cache.js';
import { metricsMiddleware } from './metrics.js';
import { afterNext, type Middleware, middlewareChain, onlyFor } from './middleware.js';
import { paymentGate } from './payment.js';
import { MAX_BODY_BYTES, MAX_URL_CHARS } from './problem.js';
import { rateLimitMiddleware } from './rate-limit.js';
import { requestId } from './request-id.js';
import { requestLog } from './request-log.js';

export interface RequestMiddleware {
  /** What every request passes through, as one Hono middleware; `.fastPath` runs it for the listener. */
  chain: MiddlewareHandler & { fastPath: FastPathRun };
  /** The caller's key and rate limit alone (the same counters), for /mcp. */
  callerChecks: Middleware[];
}

/**
 * What every request passes through, as one middleware (middleware.ts): the request id and
 * CORS headers first, set before the handler (see cors.ts for why), then the request log,
 * metrics, the 414 check, the body limit (every route: body-limit.ts), compression and the pages'
 * headers; and for /v1 (but its OpenAPI document, answered before them) the snapshot, the caller,
 * the rate limit, pay per call (x402: only in the full edition and when a network is offered) and
 * the response cache.
 */
export function requestMiddleware(
  deps: AppDeps,
  services: AppServices,
  onError: ErrorHandler<AppEnv>,
): RequestMiddleware {
  const { limiter, log, metrics, paymentsOn, usage } = services;
  // Each key's budget is its plan's (the access table), unless RATE_LIMIT_PER_KEY sets one for all.
  const planLimits = Object.fromEntries(
    Object.entries(PLAN_RATE_LIMITS).map(([plan, n]) => [
      plan,
      { limit: deps.config.RATE_LIMIT_PER_KEY ?? n, windowSeconds: 60 },
    ]),
  ) as Record<Plan, { limit: number; windowSeconds: number }>;
  const limits = rateLimitMiddleware(limiter, {
    perKey: planLimits.free,
    perKeyFor: (c) => planLimits[(c.get('caller') as Caller | undefined)?.plan ?? 'free'],
    perIp: { limit: deps.config.RATE_LIMIT_PER_IP, windowSeconds: 60 },
    trustProxy: deps.config.TRUST_PROXY,
    log: (m) => log(m),
  });
  const badKeys = new BadKeyGuard(
    limiter,
    { limit: deps.config.RATE_LIMIT_PER_IP, windowSeconds: 60 },
    deps.config.TRUST_PROXY,
    deps.config.STATE_TIMEOUT_MS,
  );
  const authenticated = authenticate(deps.state, badKeys, usage) as Middleware;
  // Pages only: the API answers no HTML, and reading a cached answer's headers here would make
  // @hono/node-server copy them into a Headers object (a tenth of a cached answer's cost).
  const pageHeaders = onlyFor(
    (c) => !c.req.path.startsWith('/v1/') && c.req.path !== '/mcp',
    [afterNext(securityHeaders(deps.config.publicUrl))],
  );
  const chain = middlewareChain(
    [
      requestId(deps.config.publicUrl) as Middleware,
      cors(paymentsOn),
      ...(deps.logger?.isLevelEnabled('info') ? [requestLog(deps.logger)] : []),
      metricsMiddleware(metrics),
      uriLength,
      boundedBody(MAX_BODY_BYTES),
      compression(),
      ...pageHeaders,
      ...onlyFor(isApiRequest, [
        snapshotOf(deps) as Middleware,
        authenticated,
        limits,
        ...(paymentsOn
          ? [
              paymentGate(
                deps.payments!,
                deps.config.EDITION,
                deps.config.publicUrl,
                deps.snapshots,
              ) as Middleware,
            ]
          : []),
        // Inside the payment gate (a refused answer is released, not settled), before the caches.
        notSetAside as Middleware,
        // The unpaid 402 of a URL, kept ready (its terms are the same for every caller).
        ...(paymentsOn ? [unpaidCache(() => deps.payments!.termsGeneration) as Middleware] : []),
        responseCache() as Middleware,
      ]),
    ],
    onError,
  );
  return { chain, callerChecks: [authenticated, limits] };
}

/** A path and query longer than any this API needs: 414, before any routing or lookup. */
const uriLength: Middleware = {
  enter(c) {
    const url = c.req.url;
    if (url.length - url.indexOf('/', url.indexOf('//') + 2) <= MAX_URL_CHARS) return undefined;
    // Thrown: answered by onError as the same problem (and handed on by the fast path, fast-path.ts).
    throw new ServiceError('uri_too_long', `The path and query are longer than ${MAX_URL_CHARS} characters.`);
  },
};

/**
 * The snapshot a request starts with is the one it answers from, even if a newer one is published
 * meanwhile; a read pinned with data_version= or RI-Data-Version answers from that one.
 */
function snapshotOf(deps: AppDeps): Middleware<Context<AppEnv>> {
  return {
    enter(c) {
      if (c.req.path === '/v1/openapi.json') return undefined;
      const pinned = requestedVersion(c);
      if (pinned)
        return pinnedSnapshot(deps.snapshots, pinned, deps.config.publicUrl).then((snapshot) => {
          c.set('snapshot', snapshot);
          return undefined;
        });
      const snapshot = deps.snapshots.acquire();
      if (!snapshot)
        throw new ServiceError('data_unavailable', deps.snapshots.unavailable(), {}, { 'retry-after': '1' });
      c.set('snapshot', snapshot);
      return undefined;
    },
    exit(c) {
      c.get('snapshot')?.release();
    },
  };
}

/**
 * A request whose snapshot was set aside since it began (its file found damaged or changed) is
 * answered 503, from no cache and with no answer computed from it (calls/set-aside.ts). Checked
 * before the caches and once the answer is made; on the fast path nothing runs between the two.
 */
const notSetAside: Middleware<Context<AppEnv>> = {
  enter(c) {
    const refused = setAsideRefusal(c.get('snapshot') as Snapshot | undefined);
    if (refused) throw refused;
    return undefined;
  },
  exit(c) {
    const refused = setAsideRefusal(c.get('snapshot') as Snapshot | undefined);
    if (refused) throw refused;
  },
};

/**
 * The requests the /v1 middleware is for: /v1 and every path under it (what `v1.use('*')`
 * matched), but GET /v1/openapi.json, whose route was registered before them and so answered
 * without them.
 */
function isApiRequest(c: Context): boolean {
  const path = c.req.path;
  if (path === '/v1') return true;
  if (!path.startsWith('/v1/')) return false;
  return path !== '/v1/openapi.json' || (c.req.method !== 'GET' && c.req.method !== 'HEAD');
}

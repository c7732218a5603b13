import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, ErrorHandler } from 'hono';
import type { Plan } from '../access/plans.js';
import { PLAN_RATE_LIMITS } from '../access/policy.js';
import { MemoryRateLimiter, type RateLimiter } from '../access/rate-limiter.js';
import { stateProbe } from '../access/state-deadline.js';
import { UsageCounter } from '../access/usage-counter.js';
import { callFault } from '../calls/operation-call.js';
import { pinnedSnapshot } from '../calls/pinned-snapshot.js';
import { SERVICE_VERSION } from '../config/paths.js';
import { ServiceError } from '../core/errors.js';
import { createLabService } from '../core/lab-service.js';
import { readBody } from '../mcp/body.js';
import { createMcp } from '../mcp/server.js';
import { discoveryDocument } from '../payments/discovery.js';
import { NETWORKS } from '../payments/networks.js';
import { isCorruption, type Snapshot } from '../snapshot/snapshot.js';
import { ipAllowed } from '../util/ip-ranges.js';
import { registerAccount } from '../web/account.js';
import { registerDocs } from '../web/docs.js';
import { createMailer } from '../web/mailer.js';
import { registerPages } from '../web/pages.js';
import { registerPricing } from '../web/pricing.js';
import { securityHeaders } from '../web/security-headers.js';
import { WebSessions } from '../web/session.js';
import { authenticate } from './auth.js';
import { BadKeyGuard } from './bad-keys.js';
import { boundedBody } from './body-limit.js';
import type { AppDeps, AppEnv, Caller } from './context.js';
import { cors } from './cors.js';
import { requestedVersion } from './data-version.js';
import { acceptsGzip, compression, markPrecompressed } from './fast-path/compression.js';
import {
  afterNext,
  type FastPathRun,
  type Middleware,
  middlewareChain,
  onlyFor,
} from './fast-path/middleware-chain.js';
import { responseCache } from './fast-path/response-cache.js';
import { takeResponseHeaders } from './fast-path/response-headers.js';
import { unpaidCache } from './fast-path/unpaid-cache.js';
import { methodNotAllowed, methodsByPath } from './method-not-allowed.js';
import { createMetrics, metricsHandler, metricsMiddleware } from './metrics.js';
import { registerOpenApi } from './openapi.js';
import { paymentGate } from './payment.js';
import { handleError, MAX_BODY_BYTES, MAX_URL_CHARS, problemResponse, validationProblem } from './problem.js';
import { clientIp, rateLimitMiddleware } from './rate-limit.js';
import { requestId } from './request-id.js';
import { requestLog } from './request-log.js';
import { registerRoutes } from './routes/index.js';
import { registerApiRoot } from './routes/root/get.js';
import type { RouteDeps } from './routes/shared.js';
import { registerSkill } from './routes/skill/get.js';

/**
 * The REST front door at /v1: parses requests, calls the service core over the snapshot the
 * request started with, and shapes answers. Every error is an RFC 9457 problem.
 */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> & { fastPath: FastPathRun } {
  const log = deps.log ?? (() => {});
  const defaultHook = (result: { success: boolean; error?: { issues: unknown[] } }, c: Context<AppEnv>) =>
    result.success
      ? undefined
      : validationProblem(c, (result.error?.issues ?? []) as Parameters<typeof validationProblem>[1]);
  const app = new OpenAPIHono<AppEnv>({ defaultHook });

  const metrics = deps.metrics ?? createMetrics();
  const limiter: RateLimiter = deps.rateLimiter ?? new MemoryRateLimiter();
  const paymentsOn = deps.config.EDITION === 'full' && deps.payments?.enabled === true;
  const onError: ErrorHandler<AppEnv> = (error, c) => {
    // A damaged snapshot page: a temporary data error (never charged); the file is checked at once.
    const snapshot = c.get('snapshot') as Snapshot | undefined;
    if (snapshot && isCorruption(error))
      return problemResponse(
        c,
        callFault(
          error,
          snapshot,
          { snapshots: deps.snapshots, log },
          { req_id: c.get('requestId') },
        ) as ServiceError,
      );
    return handleError(error, c, (e) =>
      log('request failed', { err: e.message, stack: e.stack, req_id: c.get('requestId'), path: c.req.path }),
    );
  };
  // A path and query longer than any this API needs: 414, before any routing or lookup.
  const uriLength: Middleware = {
    enter(c) {
      const url = c.req.url;
      if (url.length - url.indexOf('/', url.indexOf('//') + 2) <= MAX_URL_CHARS) return undefined;
      // Thrown: answered by onError as the same problem (and handed on by the fast path, fast-path.ts).
      throw new ServiceError(
        'uri_too_long',
        `The path and query are longer than ${MAX_URL_CHARS} characters.`,
      );
    },
  };
  // Pages only: the API answers no HTML, and reading a cached answer's headers here would make
  // @hono/node-server copy them into a Headers object (a tenth of a cached answer's cost).
  const pageHeaders = onlyFor(
    (c) => !c.req.path.startsWith('/v1/') && c.req.path !== '/mcp',
    [afterNext(securityHeaders(deps.config.publicUrl))],
  );
  // The snapshot a request starts with is the one it answers from, even if a newer one is published
  // meanwhile; a read pinned with data_version= or RI-Data-Version answers from that one.
  const snapshotMiddleware: Middleware<Context<AppEnv>> = {
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
  const usage = deps.usage ?? new UsageCounter(deps.state);
  const authenticated = authenticate(deps.state, badKeys, usage) as Middleware;
  // What every request passes through, as one middleware (middleware-chain.ts): the request id
  // and CORS headers first, set before the handler (see cors.ts for why), then the request log, metrics,
  // the 414 check, the body limit (every route: body-limit.ts), compression and the pages'
  // headers; and for /v1 (but its OpenAPI document, answered before them) the snapshot, the
  // caller, the rate limit, pay per call (x402: only in the full edition and when a network is
  // offered) and the response cache.
  const middleware = middlewareChain(
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
        snapshotMiddleware as Middleware,
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
              // The unpaid 402 of a URL, kept ready (its terms are the same for every caller).
              unpaidCache(() => deps.payments!.termsGeneration) as Middleware,
            ]
          : []),
        responseCache() as Middleware,
      ]),
    ],
    onError,
  );
  app.use('*', middleware);

  // The older edition has no research, lab or payment endpoints: they answer 404.
  const lab =
    deps.config.EDITION === 'full'
      ? createLabService({
          state: deps.state,
          ...(deps.heavy ? { heavy: deps.heavy } : {}),
          ttlSeconds: deps.config.QUOTE_TTL_SECONDS,
          ...(deps.config.QUOTE_SECRET ? { quoteSecret: deps.config.QUOTE_SECRET } : {}),
          ...(deps.now ? { now: deps.now } : {}),
        })
      : null;
  const sessions = new WebSessions(deps.state, deps.config.publicUrl);
  registerDocs(app);
  registerPages(app, {
    snapshots: deps.snapshots,
    publicUrl: deps.config.publicUrl,
    edition: deps.config.EDITION,
    payments: paymentsOn,
    sessions,
    lab,
    ...(deps.heavy ? { heavy: deps.heavy } : {}),
  });
  const mailer =
    deps.mailer ??
    createMailer({
      smtpUrl: deps.config.SMTP_URL,
      from: deps.config.MAIL_FROM,
    });
  registerPricing(app, {
    sessions,
    mailer,
    limiter,
    publicUrl: deps.config.publicUrl,
    edition: deps.config.EDITION,
    payments: paymentsOn,
    paymentNetworks: () => (paymentsOn ? deps.payments!.offeredNow.map((n) => NETWORKS[n].label) : []),
    planPrices: {
      ...(deps.config.PLAN_PRICE_PERSONAL_USD === undefined
        ? {}
        : { personal: deps.config.PLAN_PRICE_PERSONAL_USD }),
      ...(deps.config.PLAN_PRICE_PROFESSIONAL_USD === undefined
        ? {}
        : { professional: deps.config.PLAN_PRICE_PROFESSIONAL_USD }),
      ...(deps.config.PLAN_PRICE_ENTERPRISE_USD === undefined
        ? {}
        : { enterprise: deps.config.PLAN_PRICE_ENTERPRISE_USD }),
    },
    operatorEmail: deps.config.OPERATOR_EMAIL ?? null,
    smtp: deps.config.SMTP_URL !== undefined,
    clientIp: (c) => clientIp(c, deps.config.TRUST_PROXY),
    log,
  });
  registerAccount(app, {
    state: deps.state,
    sessions,
    mailer,
    limiter,
    usage,
    publicUrl: deps.config.publicUrl,
    edition: deps.config.EDITION,
    clientIp: (c) => clientIp(c, deps.config.TRUST_PROXY),
    log,
  });
  registerSkill(app, { publicUrl: deps.config.publicUrl });
  registerApiRoot(app, { publicUrl: deps.config.publicUrl, edition: deps.config.EDITION });
  app.get('/healthz', (c) => c.json({ ok: true }));
  // The priced operations for x402 indexers (a convention of theirs, not of the x402 spec).
  // The networks a 402 offers now (asking the facilitator first if it has not answered yet).
  app.get('/.well-known/x402', async (c) => {
    if (paymentsOn) await deps.payments!.ready();
    return c.json(discoveryDocument(deps.config.publicUrl, paymentsOn ? deps.payments!.offeredNow : []));
  });
  // Operators only: loopback, or METRICS_ALLOW (the socket's address, not X-Forwarded-For).
  const metricsPage = metricsHandler(metrics, { dataVersion: () => deps.snapshots.version });
  app.get('/metrics', (c, next) =>
    ipAllowed(clientIp(c), deps.config.METRICS_ALLOW)
      ? metricsPage(c, next)
      : problemResponse(c, new ServiceError('not_found', `No resource at ${c.req.path}.`)),
  );
  // Ready while some verified snapshot is served; `degraded` says when it is not the current one.
  // Not ready while the state store does not answer within its deadline (keyed calls would get
  // 503 state_unavailable); ready again as soon as it does, without a restart. Not ready either
  // while the research and lab workers cannot answer from the served snapshot (`workers`): they
  // open its file on their own, and the main thread reading it says nothing of them.
  const stateHealth = stateProbe(deps.state);
  const workersHealth = async (): Promise<string | null> => {
    const snapshot = deps.heavy ? deps.snapshots.acquire() : null;
    if (!snapshot || !deps.heavy) return null;
    try {
      return await deps.heavy.probe(snapshot);
    } finally {
      snapshot.release();
    }
  };
  app.get('/readyz', async (c) => {
    const { serving, current, problem } = deps.snapshots.health();
    const limits = limiter.degradedReason?.() ?? null;
    const [stateProblem, workers] = await Promise.all([stateHealth(), workersHealth()]);
    const problems = [problem, limits].filter((p): p is string => p !== null);
    const ready = serving !== null && stateProblem === null && workers === null;
    return c.json(
      {
        ready,
        status: !ready ? 'unavailable' : problems.length > 0 ? 'degraded' : 'ok',
        data_version: serving,
        current_version: current,
        ...(problem ? { problem } : {}),
        ...(limits ? { rate_limits: limits } : {}),
        ...(stateProblem ? { state: stateProblem } : {}),
        ...(workers ? { workers } : {}),
      },
      ready ? 200 : 503,
    );
  });

  const routes: RouteDeps = {
    edition: deps.config.EDITION,
    publicUrl: deps.config.publicUrl,
    ...(deps.heavy ? { heavy: deps.heavy } : {}),
    lab,
    snapshotDir: deps.snapshots.dir,
  };
  const v1 = new OpenAPIHono<AppEnv>({ defaultHook });
  registerOpenApi(v1, routes, paymentsOn ? deps.payments : undefined, deps.snapshots);

  registerRoutes(v1, routes);
  app.route('/v1', v1);

  // The MCP tool server: the same core, access table and payments; the key is the connection's.
  const mcp = createMcp({
    ...(deps.heavy ? { heavy: deps.heavy } : {}),
    snapshots: deps.snapshots,
    edition: routes.edition,
    publicUrl: routes.publicUrl,
    lab,
    payments: paymentsOn ? deps.payments : undefined,
    version: SERVICE_VERSION,
    log,
  });
  app.use('/mcp', middlewareChain([authenticated, limits], onError));
  app.all('/mcp', async (c) => {
    // Stateless: no server-to-client stream to open (GET) and no session to end (DELETE).
    if (c.req.method !== 'POST')
      return c.json(
        {
          jsonrpc: '2.0',
          error: {
            code: -32000,
            message: 'Method not allowed: this MCP server is stateless; POST JSON-RPC requests.',
          },
          id: null,
        },
        405,
        { allow: 'POST' },
      );
    const text = await readBody(c, MAX_BODY_BYTES);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return c.json(
        { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null },
        400,
      );
    }
    const caller = { plan: c.get('caller').plan };
    // A repeated read: ready bytes with every header at once, as a cached REST answer (no Request,
    // no protocol server, nothing compressed per request).
    const hit = mcp.cached(
      (name) => c.req.header(name),
      caller,
      body,
      acceptsGzip(c.req.header('accept-encoding')),
    );
    if (hit) {
      markPrecompressed(c);
      return new Response(hit.body, {
        status: 200,
        headers: takeResponseHeaders(c, hit.headers, true) ?? hit.headers,
      });
    }
    const header = (name: string) => c.req.header(name);
    const direct = await mcp.direct(header, caller, body);
    if (direct !== null) return c.body(direct, 200, { 'content-type': 'application/json' });
    return mcp.handle(c.req.raw, caller, body);
  });

  // A known path asked with another method: 405 with Allow (as /mcp answers GET and DELETE).
  const allowedAt = methodsByPath(app.routes);
  app.notFound((c) => {
    const allowed = allowedAt(c.req.path);
    if (allowed.length > 0 && !allowed.includes(c.req.method))
      return problemResponse(c, methodNotAllowed(c.req.method, c.req.path, allowed));
    return problemResponse(c, new ServiceError('not_found', `No resource at ${c.req.path}.`));
  });
  app.onError(onError);
  // The same middleware, for the node listener's fast path: cached answers without Hono's objects.
  return Object.assign(app, { fastPath: middleware.fastPath });
}

/**
 * The requests the /v1 middleware is for: /v1 and every path under it (what `v1.use('*')` matched),
 * but GET /v1/openapi.json, whose route was registered before them and so answered without them.
 */
function isApiRequest(c: Context): boolean {
  const path = c.req.path;
  if (path === '/v1') return true;
  if (!path.startsWith('/v1/')) return false;
  return path !== '/v1/openapi.json' || (c.req.method !== 'GET' && c.req.method !== 'HEAD');
}

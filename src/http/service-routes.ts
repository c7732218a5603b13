import type { OpenAPIHono } from '@hono/zod-openapi';
import { stateProbe } from '../access/state-deadline.js';
import { ServiceError } from '../core/errors.js';
import { discoveryDocument } from '../payments/discovery.js';
import { ipAllowed } from '../util/ip-ranges.js';
import type { AppServices } from './app-services.js';
import type { AppDeps, AppEnv } from './context.js';
import { metricsHandler } from './metrics.js';
import { problemResponse } from './problem.js';
import { clientIp } from './rate-limit.js';

/**
 * The service's own addresses, outside /v1: /healthz, /readyz, /metrics (operators only) and
 * /.well-known/x402 (the priced operations, for x402 indexers).
 */
export function registerServiceRoutes(app: OpenAPIHono<AppEnv>, deps: AppDeps, services: AppServices): void {
  const { limiter, metrics, paymentsOn } = services;
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
    const snapshot = deps.workerPool ? deps.snapshots.acquire() : null;
    if (!snapshot || !deps.workerPool) return null;
    try {
      return await deps.workerPool.probe(snapshot);
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
}

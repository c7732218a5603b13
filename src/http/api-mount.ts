import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { AppServices } from './app-services.js';
import type { AppDeps, AppEnv } from './context.js';
import { requestedVersion } from './data-version.js';
import { registerOpenApi } from './openapi.js';
import { validationHook } from './problem.js';
import { registerRoutes } from './routes/index.js';
import { registerApiRoot } from './routes/root/get.js';
import { type RouteDeps, strictQuery } from './routes/shared.js';
import { registerSkill } from './routes/skill/get.js';

/**
 * The REST API on the app: its root at /v1, the agent skill, the OpenAPI document and every
 * route under /v1, with the services a route reaches through its context (RouteDeps).
 */
export function mountApi(app: OpenAPIHono<AppEnv>, deps: AppDeps, services: AppServices): void {
  registerSkill(app, { publicUrl: deps.config.publicUrl, edition: deps.config.EDITION });
  registerApiRoot(app, { publicUrl: deps.config.publicUrl, edition: deps.config.EDITION });
  const routes: RouteDeps = {
    edition: deps.config.EDITION,
    publicUrl: deps.config.publicUrl,
    ...(deps.workerPool ? { workerPool: deps.workerPool } : {}),
    lab: services.lab,
    snapshotDir: deps.snapshots.dir,
  };
  const v1 = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  // The OpenAPI document takes no parameter (the interface spec: none), not even a pin: it
  // describes the API served now. Checked before its route, which openapi.ts registers.
  v1.get('/openapi.json', pinRefused, strictQuery());
  registerOpenApi(v1, routes, services.paymentsOn ? deps.payments : undefined, deps.snapshots);
  registerRoutes(v1, routes);
  app.route('/v1', v1);
}

/** A data_version pin (parameter or header) on an answer that takes none: 400 naming it (data-version.ts). */
const pinRefused: MiddlewareHandler = async (c, next) => {
  requestedVersion(c);
  await next();
};

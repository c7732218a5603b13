import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppServices } from './app-services.js';
import type { AppDeps, AppEnv } from './context.js';
import { registerOpenApi } from './openapi.js';
import { validationHook } from './problem.js';
import { registerRoutes } from './routes/index.js';
import { registerApiRoot } from './routes/root/get.js';
import type { RouteDeps } from './routes/shared.js';
import { registerSkill } from './routes/skill/get.js';

/**
 * The REST API on the app: its root at /v1, the agent skill, the OpenAPI document and every
 * route under /v1, with the services a route reaches through its context (RouteDeps).
 */
export function mountApi(app: OpenAPIHono<AppEnv>, deps: AppDeps, services: AppServices): void {
  registerSkill(app, { publicUrl: deps.config.publicUrl });
  registerApiRoot(app, { publicUrl: deps.config.publicUrl, edition: deps.config.EDITION });
  const routes: RouteDeps = {
    edition: deps.config.EDITION,
    publicUrl: deps.config.publicUrl,
    ...(deps.heavy ? { heavy: deps.heavy } : {}),
    lab: services.lab,
    snapshotDir: deps.snapshots.dir,
  };
  const v1 = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  registerOpenApi(v1, routes, services.paymentsOn ? deps.payments : undefined, deps.snapshots);
  registerRoutes(v1, routes);
  app.route('/v1', v1);
}

import { OpenAPIHono } from '@hono/zod-openapi';
import { mountApi } from './api-mount.js';
import { appServices } from './app-services.js';
import type { AppDeps, AppEnv } from './context.js';
import { answerUnknownPaths, errorHandler } from './error-handling.js';
import { type FastPathRun, middlewareChain } from './fast-path/middleware-chain.js';
import { mountMcp } from './mcp-mount.js';
import { mountPages } from './page-mount.js';
import { validationHook } from './problem.js';
import { requestMiddleware } from './request-middleware.js';
import { registerServiceRoutes } from './service-routes.js';

/**
 * The service over HTTP: REST at /v1, the MCP tool server at /mcp, the web pages, and the
 * service's own addresses (health, readiness, metrics), behind the middleware every request
 * passes through. The REST front door parses requests, calls the service core over the snapshot
 * the request started with, and shapes answers. Every error is an RFC 9457 problem.
 */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> & { fastPath: FastPathRun } {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const services = appServices(deps);
  const onError = errorHandler(deps, services.log);
  const middleware = requestMiddleware(deps, services, onError);
  app.use('*', middleware.chain);
  mountPages(app, deps, services);
  registerServiceRoutes(app, deps, services);
  mountApi(app, deps, services);
  mountMcp(app, deps, services, middlewareChain(middleware.callerChecks, onError));
  answerUnknownPaths(app);
  app.onError(onError);
  // The same middleware, for the node listener's fast path: cached answers without Hono's objects.
  return Object.assign(app, { fastPath: middleware.chain.fastPath });
}

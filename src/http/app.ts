import { OpenAPIHono } from '@hono/zod-openapi';
import { SERVICE_VERSION } from '../config/paths.js';
import { mountMcp } from '../mcp/mount.js';
import { mountApi } from './api-mount.js';
import { appServices } from './app-services.js';
import type { AppDeps, AppEnv } from './context.js';
import { answerUnknownPaths, errorHandler } from './error-handling.js';
import { acceptsGzip } from './fast-path/compression.js';
import type { FastPathRun } from './fast-path/handoff.js';
import { readyResponse } from './fast-path/response-headers.js';
import { middlewareChain } from './middleware.js';
import { mountPages } from './page-mount.js';
import { MAX_BODY_BYTES, validationHook } from './problem.js';
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
  const site = mountPages(app, deps, services);
  registerServiceRoutes(app, deps, services);
  mountApi(app, deps, services);
  // The MCP tool server: the same core, access table and payments; the key is the connection's.
  mountMcp(
    app,
    {
      ...(deps.workerPool ? { workerPool: deps.workerPool } : {}),
      snapshots: deps.snapshots,
      edition: deps.config.EDITION,
      publicUrl: deps.config.publicUrl,
      lab: services.lab,
      payments: services.paymentsOn ? deps.payments : undefined,
      version: SERVICE_VERSION,
      log: services.log,
    },
    {
      callerChecks: middlewareChain(middleware.callerChecks, onError),
      maxBodyBytes: MAX_BODY_BYTES,
      acceptsGzip: (c) => acceptsGzip(c.req.header('accept-encoding')),
      readyResponse: (c, answer) => readyResponse(c, answer.headers, answer.body),
    },
  );
  answerUnknownPaths(app, site);
  app.onError(onError);
  // The same middleware, for the node listener's fast path: cached answers without Hono's objects.
  return Object.assign(app, { fastPath: middleware.chain.fastPath });
}

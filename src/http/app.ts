import { randomUUID } from 'node:crypto';
import { OpenAPIHono } from '@hono/zod-openapi';
import { ServiceError } from '../core/errors.js';
import type { AppDeps, AppEnv } from './context.js';
import { handleError, problemResponse } from './problem.js';
import { registerGetElement } from './routes/elements/get.js';
import { registerListElements } from './routes/elements/list.js';

/**
 * The REST front door at /v1: parses requests, calls the service core over the snapshot the
 * request started with, and shapes answers. Every error is an RFC 9457 problem.
 */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const log = deps.log ?? (() => {});
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        const issue = result.error.issues[0];
        const name = issue?.path.join('.') || 'request';
        return problemResponse(
          c,
          new ServiceError('invalid_parameter', `Parameter '${name}': ${issue?.message ?? 'invalid'}.`, {
            parameter: name,
          }),
        );
      }
      return undefined;
    },
  });

  app.use('*', async (c, next) => {
    const requestId = c.req.header('x-request-id')?.slice(0, 100) || randomUUID();
    c.set('requestId', requestId);
    c.header('x-request-id', requestId);
    await next();
  });

  app.get('/healthz', (c) => c.json({ ok: true }));
  app.get('/readyz', (c) => {
    const version = deps.snapshots.version;
    return c.json({ ready: version !== null, data_version: version }, version ? 200 : 503);
  });

  // The snapshot a request starts with is the one it answers from, even if a newer one is published meanwhile.
  app.use('/v1/*', async (c, next) => {
    const snapshot = deps.snapshots.acquire();
    if (!snapshot)
      throw new ServiceError('data_unavailable', 'No data snapshot is published yet; try again shortly.');
    c.set('snapshot', snapshot);
    try {
      await next();
    } finally {
      snapshot.release();
    }
  });

  const v1 = new OpenAPIHono<AppEnv>({ defaultHook: app.defaultHook });
  registerListElements(v1, deps.config.publicUrl);
  registerGetElement(v1, deps.config.publicUrl);
  app.route('/v1', v1);

  app.notFound((c) => problemResponse(c, new ServiceError('not_found', `No resource at ${c.req.path}.`)));
  app.onError((error, c) =>
    handleError(error, c, (e) => log('request failed', { err: e.message, stack: e.stack })),
  );
  return app;
}

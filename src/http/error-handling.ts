import type { OpenAPIHono } from '@hono/zod-openapi';
import type { ErrorHandler } from 'hono';
import { callFault } from '../calls/operation-call.js';
import { ServiceError } from '../core/errors.js';
import { isCorruption, type Snapshot } from '../snapshot/snapshot.js';
import type { Site } from '../web/html.js';
import { notFoundPage, wantsNotFoundPage } from '../web/not-found.js';
import type { AppDeps, AppEnv } from './context.js';
import { methodNotAllowed, methodsByPath } from './method-not-allowed.js';
import { handleError, problemResponse } from './problem.js';

/**
 * What a thrown error becomes: an RFC 9457 problem (problem.ts); a damaged snapshot page a
 * temporary data error (never charged), and the file is checked at once.
 */
export function errorHandler(
  deps: Pick<AppDeps, 'snapshots'>,
  log: NonNullable<AppDeps['log']>,
): ErrorHandler<AppEnv> {
  return (error, c) => {
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
}

/**
 * A path no route answers: 404; a known path asked with another method: 405 with Allow (as /mcp
 * answers GET and DELETE). Registered last, once every route is.
 */
export function answerUnknownPaths(app: OpenAPIHono<AppEnv>, site: Site): void {
  const allowedAt = methodsByPath(app.routes);
  app.notFound((c) => {
    const allowed = allowedAt(c.req.path);
    if (allowed.length > 0 && !allowed.includes(c.req.method))
      return problemResponse(c, methodNotAllowed(c.req.method, c.req.path, allowed));
    // A browser asking a page path gets the site's not-found page; API clients the problem.
    if (wantsNotFoundPage(c)) return notFoundPage(c, site);
    return problemResponse(c, new ServiceError('not_found', `No resource at ${c.req.path}.`));
  });
}

import type { Logger } from 'pino';
import type { Middleware } from './fast-path/middleware-chain.js';
import { onAnswered, routeLabel } from './metrics.js';

/**
 * One JSON log line per request: id, method, route pattern, path, status, duration, and the key's
 * visible prefix when there is one. Never the key, never the query string's values beyond the path.
 */
export function requestLog(logger: Logger): Middleware {
  return onAnswered((c, status, ms) =>
    logger.info(
      {
        req_id: c.get('requestId'),
        method: c.req.method,
        route: routeLabel(c),
        path: c.req.path,
        status,
        ms: Math.round(ms * 10) / 10,
        key_prefix: c.get('apiKeyPrefix') ?? null,
      },
      'request',
    ),
  );
}

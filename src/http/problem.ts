import type { Context } from 'hono';
import { ServiceError } from '../core/errors.js';

/** RFC 9457 problem details, with the stable code and the request id every error carries. */
export function problemResponse(c: Context, error: ServiceError): Response {
  const body = {
    type: `https://errors.research-intensity.dev/${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    instance: c.req.path,
    request_id: c.get('requestId') as string | undefined,
    ...error.extra,
  };
  return c.body(JSON.stringify(body), error.status as 400, {
    'content-type': 'application/problem+json',
    'cache-control': 'no-store',
  });
}

/** app.onError: a ServiceError keeps its code; anything else is a 500 without a stack trace. */
export function handleError(error: Error, c: Context, log: (e: Error) => void): Response {
  if (error instanceof ServiceError) return problemResponse(c, error);
  log(error);
  return problemResponse(
    c,
    new ServiceError('internal_error', 'The service failed to answer; the error was logged.'),
  );
}

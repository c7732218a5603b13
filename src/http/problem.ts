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
  // c.body keeps the headers middleware prepared (CORS, request id, rate limits).
  return c.body(JSON.stringify(body), error.status as 400, {
    'content-type': 'application/problem+json',
    'cache-control': 'no-store',
    ...error.headers,
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

interface ValidationIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

/** The validation hook of every route: the first issue, as invalid_parameter naming the parameter. */
export function validationProblem(c: Context, issues: readonly ValidationIssue[]): Response {
  const issue = issues[0];
  if (issue?.code === 'unrecognized_keys' && issue.keys?.length) {
    const name = issue.keys[0]!;
    return problemResponse(
      c,
      new ServiceError(
        'invalid_parameter',
        `Unknown parameter '${name}': this endpoint does not take it (nothing is ignored silently).`,
        {
          parameter: name,
        },
      ),
    );
  }
  const name = issue?.path.map(String).join('.') || 'request';
  return problemResponse(
    c,
    new ServiceError('invalid_parameter', `Parameter '${name}': ${issue?.message ?? 'invalid'}.`, {
      parameter: name,
    }),
  );
}

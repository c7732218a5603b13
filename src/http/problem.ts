import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ServiceError } from '../core/errors.js';

/** The largest request body taken (POST /lab/*: a query or a markdown text with one). */
export const MAX_BODY_BYTES = 128 * 1024;

/** The longest path and query taken (a research question is at most 300 characters). */
export const MAX_URL_CHARS = 8 * 1024;

/**
 * The RFC 9457 body of an error, the one shape every error answer has: REST's (problemResponse)
 * and Node's own refusals written before the app sees the request (server-limits.ts).
 */
export function problemBody(
  publicUrl: string,
  error: ServiceError,
  request: { instance?: string; request_id?: string | undefined } = {},
): Record<string, unknown> {
  return {
    type: `${publicUrl}/docs/errors#${error.code}`,
    title: error.title,
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...request,
    ...error.extra,
  };
}

/** RFC 9457 problem details, with the stable code and the request id every error carries. */
export function problemResponse(c: Context, error: ServiceError): Response {
  const body = problemBody((c.get('publicUrl') as string | undefined) ?? '', error, {
    instance: c.req.path,
    request_id: c.get('requestId') as string | undefined,
  });
  // c.body keeps the headers middleware prepared (CORS, request id, rate limits).
  return c.body(JSON.stringify(body), error.status as 400, {
    'content-type': 'application/problem+json',
    'cache-control': 'no-store',
    ...error.headers,
  });
}

/**
 * app.onError: a ServiceError keeps its code; Hono's own refusals (a body that is not JSON, one
 * over the size limit) become the matching problem; anything else is a 500 without a stack trace.
 */
export function handleError(error: Error, c: Context, log: (e: Error) => void): Response {
  if (error instanceof ServiceError) return problemResponse(c, error);
  if (error instanceof HTTPException && error.status === 413) {
    return problemResponse(
      c,
      new ServiceError('payload_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`),
    );
  }
  if (error instanceof HTTPException && error.status < 500) {
    return problemResponse(
      c,
      new ServiceError('invalid_parameter', `The request body could not be read: ${error.message}.`, {
        parameter: 'body',
      }),
    );
  }
  // The client hung up while its request was read: nothing failed here, and no one reads the answer.
  if (clientWentAway(error))
    return problemResponse(
      c,
      new ServiceError('bad_request', 'The request was cut off before it was complete.'),
    );
  log(error);
  return problemResponse(
    c,
    new ServiceError('internal_error', 'The service failed to answer; the error was logged.'),
  );
}

/** Node's signs of a client that closed its connection mid-request (not a fault of the service). */
function clientWentAway(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return error.message === 'aborted' || code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE';
}

interface ValidationIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

/** The validation hook of every route: the first issue, as invalid_parameter naming the parameter. */
function validationProblem(c: Context, issues: readonly ValidationIssue[]): Response {
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

/** The app's and /v1's defaultHook: a request that fails its route's schema gets validationProblem. */
export const validationHook = (result: { success: boolean; error?: { issues: unknown[] } }, c: Context) =>
  result.success ? undefined : validationProblem(c, (result.error?.issues ?? []) as ValidationIssue[]);

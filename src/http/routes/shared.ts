import { z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { validator } from 'hono/validator';
import type { Edition } from '../../access/policy.js';
import type { LabService } from '../../core/lab-service.js';
import type { WorkerPool } from '../../core/worker-pool.js';
import { validationHook } from '../problem.js';

/** What every route registration needs besides the app. */
export interface RouteDeps {
  edition: Edition;
  publicUrl: string;
  /** Where research and lab answers are computed (a worker pool in `ri serve`); in this thread when absent. */
  workerPool?: WorkerPool;
  /** The lab (quotes and runs); null in the older edition, which has no research, lab or payments. */
  lab: LabService | null;
  /** Where the published snapshots are (GET /v1/versions lists the kept ones). */
  snapshotDir: string;
}

const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z
      .string()
      .openapi({ description: 'Stable error code, e.g. unknown_symbol, invalid_parameter, plan_required' }),
    instance: z.string().optional(),
    request_id: z.string().optional(),
    parameter: z.string().optional(),
    required_plan: z.string().optional(),
    upgrade_url: z.string().optional(),
    suggestions: z.array(z.unknown()).optional(),
    suggested_query: z
      .string()
      .optional()
      .openapi({ description: 'unusable_query: the query with its one definite fix applied' }),
    reason: z
      .string()
      .optional()
      .openapi({ description: 'A refused payment: why (payment_terms_mismatch names each field)' }),
  })
  .passthrough()
  .openapi('Problem', { description: 'RFC 9457 problem details' });

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

/** The error answers a route can give, by its access level. */
export function errorResponses(kind: 'public' | 'keyed' | 'feed', extra: Record<number, string> = {}) {
  return {
    400: problem('A parameter is invalid or unknown (code invalid_parameter, naming the parameter)'),
    ...(kind === 'feed'
      ? {
          401: problem(
            'No feed token where the feed needs one (authentication_required), or token= is not a live feed token (invalid_feed_token; an API key never is one)',
          ),
          403: problem("The feed token's account is on a plan too low (plan_required)"),
        }
      : kind === 'keyed'
        ? {
            401: problem(
              'No key (authentication_required) or a bad key (invalid_key); WWW-Authenticate: Bearer',
            ),
            403: problem("The key's plan is too low (plan_required, with required_plan and upgrade_url)"),
          }
        : { 401: problem('A key was sent but is not valid (invalid_key)') }),
    429: problem('A rate limit was hit (rate_limited); Retry-After says when to retry'),
    503: problem(
      'No snapshot can be read (data_unavailable), or the keys and accounts store does not answer in time (state_unavailable); temporary, Retry-After, never charged',
    ),
    ...Object.fromEntries(Object.entries(extra).map(([status, d]) => [status, problem(d)])),
  };
}

/** A required JSON request body with this schema. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { body: { required: true, content: { 'application/json': { schema } } } };
}

/**
 * The query of a route not declared with defineRoute (the API's root, the skill, the OpenAPI
 * document), checked as a declared route's is: strict, so that an unknown or invalid parameter is
 * 400 invalid_parameter naming it, never ignored.
 */
export function strictQuery(shape: z.ZodRawShape = {}): MiddlewareHandler {
  const schema = z.object(shape).strict();
  return validator('query', (value, c) => {
    const parsed = schema.safeParse(value);
    return parsed.success ? parsed.data : validationHook(parsed, c)!;
  });
}

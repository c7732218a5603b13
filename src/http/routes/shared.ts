import { z } from '@hono/zod-openapi';
import { DEFAULT_PAPER_LIMIT, type Edition, MAX_PAPER_LIMIT } from '../../access/policy.js';
import { ResolutionSchema } from '../../contracts/common.js';
import { SubjectTypeSchema } from '../../contracts/subjects.js';
import { ServiceError } from '../../core/errors.js';
import type { LabService } from '../../core/lab-service.js';
import type { WorkerPool } from '../../core/worker-pool.js';
import { DATA_VERSION } from '../data-version.js';

/** What every route registration needs besides the app. */
export interface RouteDeps {
  edition: Edition;
  publicUrl: string;
  /** Where research and lab answers are computed (a worker pool in `ri serve`); in this thread when absent. */
  heavy?: WorkerPool;
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
  })
  .passthrough()
  .openapi('Problem', { description: 'RFC 9457 problem details' });

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

/** The error answers a route can give, by its access level. */
export function errorResponses(kind: 'public' | 'keyed', extra: Record<number, string> = {}) {
  return {
    400: problem('A parameter is invalid or unknown (code invalid_parameter, naming the parameter)'),
    ...(kind === 'keyed'
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

export const SymbolParam = z.object({
  symbol: z
    .string()
    .min(1)
    .max(40)
    .openapi({
      param: { name: 'symbol', in: 'path' },
      example: 'Fe',
      description: 'Chemical symbol, any case',
    }),
});

export const SubjectParams = z.object({
  subject_type: SubjectTypeSchema.openapi({ param: { name: 'subject_type', in: 'path' }, example: 'topic' }),
  subject_id: z
    .string()
    .min(1)
    .max(200)
    .openapi({
      param: { name: 'subject_id', in: 'path' },
      example: 'T10030',
      description: 'OpenAlex topic id (T10030) or keyword slug',
    }),
});

/**
 * data_version= on a read: answer from that published snapshot while it is kept (GET
 * /v1/versions), the same bytes as when it was current. The RI-Data-Version request header does
 * the same (data-version.ts reads both, before the route).
 */
export const DataVersionQuery = z
  .string()
  .regex(DATA_VERSION, 'must be a data_version: 16 lower-case hex digits, as in an answer')
  .optional()
  .openapi({
    // No example: an example version would be one no longer kept (410) when tried.
    description:
      "Answer from this data version (an earlier answer's data_version) while it is kept: see GET /v1/versions. " +
      'The RI-Data-Version request header does the same. A version no longer kept: 410 data_version_gone, naming the current one.',
  });

/**
 * The form of a tabular read: csv is the same answer as CSV, as `Accept: text/csv` gives it, for
 * what cannot send a header (a spreadsheet's import from a URL, pandas.read_csv(url)); json is
 * JSON whatever Accept says. Spread into the query of a route that answers CSV.
 */
export const FormatQuery = {
  format: z.enum(['json', 'csv']).optional().openapi({
    description: 'csv: the answer as CSV, as with Accept: text/csv (for a URL alone); json: JSON',
  }),
};

/** Spread into a read route's query: `z.object({ ...own, ...PinnedQuery }).strict()`. */
export const PinnedQuery = { data_version: DataVersionQuery };

/** search_subjects' q: free text. */
export const SubjectSearchText = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .openapi({ example: 'oxygen evolution' })
  .describe('Free text, 1-200 characters, e.g. "co2 reduction copper"');

/** An element's papers narrowed to those with a keyword. */
export const KeywordQuery = z
  .string()
  .min(1)
  .max(100)
  .optional()
  .describe('Only papers with this keyword (slug or name)');

export const ResolutionQuery = ResolutionSchema.default('yearly').openapi({
  description: 'yearly (any key), monthly (Personal+), daily (Professional+, elements only)',
});

export const SortQuery = z
  .enum(['impact', 'newest', 'foundational', 'ris'])
  .default('impact')
  .transform((s) => (s === 'ris' ? 'impact' : s))
  .openapi({
    description: 'impact (default; ris is accepted as an alias), newest, foundational (most cited first)',
  });

export const LimitQuery = z.coerce
  .number()
  .int()
  .min(1)
  .max(MAX_PAPER_LIMIT)
  .default(DEFAULT_PAPER_LIMIT)
  .openapi({
    description: `Papers to return, 1-${MAX_PAPER_LIMIT} (default ${DEFAULT_PAPER_LIMIT}); only the top ${MAX_PAPER_LIMIT} are ranked`,
  });

/**
 * Two parameters of which exactly one must be given (q or paper; query or markdown; quote_id or
 * quote): 400 invalid_parameter naming the one to add, or the second of two.
 */
export function requireExactlyOne(given: Record<string, unknown>, what: string): void {
  const [first, second] = Object.keys(given) as [string, string];
  const present = Object.entries(given).filter(([, v]) => v !== undefined);
  if (present.length === 1) return;
  throw new ServiceError('invalid_parameter', `Give either ${what}, not both or neither.`, {
    parameter: present.length === 0 ? first : second,
  });
}

/** A required JSON request body with this schema. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { body: { required: true, content: { 'application/json': { schema } } } };
}

/**
 * The request parameters several operations share, declared once with their OpenAPI metadata:
 * REST's routes (as query and path parameters, through queries.ts), MCP's tools (as tool input)
 * and the price of a call read these, so the doors cannot take a parameter differently. The
 * parameters of one area are beside its answers (research.ts, lab.ts).
 */
import { z } from '@hono/zod-openapi';
import { DEFAULT_PAPER_LIMIT, MAX_PAPER_LIMIT } from '../access/policy.js';
import { ResolutionSchema } from './common.js';
import { DATA_VERSION, DATA_VERSION_FORM } from './data-version.js';
import { SubjectTypeSchema } from './subjects.js';

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

/** A batch: comma-separated symbols, any case; each element once, in the order given. */
export const SymbolsQuery = z
  .string()
  .min(1)
  .max(1000)
  .openapi({ example: 'Fe,Ni,Co', description: 'Comma-separated element symbols, any case (Fe,ni,CO)' });

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
 * the same (http/data-version.ts reads both, before the route).
 */
export const DataVersionQuery = z
  .string()
  .regex(DATA_VERSION, `must be a data_version: ${DATA_VERSION_FORM}, as in an answer`)
  .optional()
  .openapi({
    // No example: an example version would be one no longer kept (410) when tried.
    description:
      "Answer from this data version (an earlier answer's data_version) while it is kept: see GET /v1/versions. " +
      'The RI-Data-Version request header does the same. A version no longer kept: 410 data_version_gone, naming the current one.',
  });

/** Spread into a read's parameters: `z.object({ ...own, ...PinnedQuery }).strict()`. */
export const PinnedQuery = { data_version: DataVersionQuery };

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

/** The most periods `last` may ask for (a daily history has a period a day since its first paper). */
const MAX_HISTORY_LAST = 100_000;

/**
 * A history period in any resolution's form; that it is the form of the resolution asked for
 * (a year for yearly, a month for monthly, a day for daily) is checked with the resolution, by
 * the core (core/history-range.ts), which names the form expected.
 */
const HistoryPeriod = (description: string, example: string) =>
  z
    .string()
    .regex(
      /^\d{4}(?:-\d{2}(?:-\d{2})?)?$/,
      'expected a period: 2024 (yearly), 2024-03 (monthly) or 2024-03-15 (daily)',
    )
    .optional()
    .openapi({ description, example });

/**
 * A history's range, as REST's query and MCP's arguments take it: from and to bound the periods
 * (both included), last keeps the N most recent of those. A range does not change the price.
 */
export const HistoryRangeQuery = {
  from: HistoryPeriod(
    "The first period, in the resolution's form: 2024 (yearly), 2024-03 (monthly), 2024-03-15 (daily)",
    '2020',
  ),
  to: HistoryPeriod('The last period (included), in the same form', '2024'),
  last: optionalIntegerParam(1, MAX_HISTORY_LAST).openapi({
    description: `Only the N most recent periods (of from..to when given), 1-${MAX_HISTORY_LAST}`,
    example: 12,
  }),
};

/** A paper list's sort, as REST's query and MCP's paper tools take it (described for both). */
export const SortQuery = z
  .enum(['impact', 'newest', 'foundational', 'ris'])
  .default('impact')
  .transform((s) => (s === 'ris' ? 'impact' : s))
  .describe('impact (default; ris is accepted as an alias), newest, foundational (most cited first)');

/** Resolutions of a subject's history, in a tool's input (daily is for elements only). */
export const SubjectResolutionArg = z
  .enum(['yearly', 'monthly'])
  .default('yearly')
  .describe('yearly (default) or monthly');

/**
 * An integer parameter as every door takes it, one schema: plain decimal digits from a query
 * string (REST, and the price of a call, read from the same parse) or a JSON integer (MCP's
 * arguments). Number() alone would take 0x10, 1e1, 0b11 and ' 10' too; anything but digits, or a
 * value out of range, is refused naming the real bounds (not JavaScript's largest safe integer).
 */
export function integerParam(min: number, max: number, fallback: number) {
  return z.preprocess(fromDigits, integerIn(min, max).default(fallback));
}

/** The same, optional: absent when not given. */
function optionalIntegerParam(min: number, max: number) {
  return z.preprocess(fromDigits, integerIn(min, max).optional());
}

function fromDigits(v: unknown): unknown {
  return typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
}

function integerIn(min: number, max: number) {
  const expected = { error: `expected an integer from ${min} to ${max}, in decimal digits` };
  return z.number(expected).int(expected).min(min, expected).max(max, expected);
}

export const LimitQuery = integerParam(1, MAX_PAPER_LIMIT, DEFAULT_PAPER_LIMIT).openapi({
  description: `Papers to return, 1-${MAX_PAPER_LIMIT} (default ${DEFAULT_PAPER_LIMIT}); only the top ${MAX_PAPER_LIMIT} are ranked`,
});

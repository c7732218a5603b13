import { z } from '@hono/zod-openapi';
import { LAB_DEPTHS, LAB_LICENCE_ABOVE, type LabDepth } from '../access/policy.js';
import { MAX_QUERY_LENGTH } from '../lab/query-parser.js';
import { envelopeShape, PaperSchema, UsdSchema } from './common.js';

/** The lab's depths as a phrase: "papers_20 or papers_100". */
export const LAB_DEPTH_NAMES = Object.keys(LAB_DEPTHS).join(' or ');

const DepthSchema = z
  .enum(Object.keys(LAB_DEPTHS) as [LabDepth, ...LabDepth[]])
  .describe(`${LAB_DEPTH_NAMES}: the top papers of the quoted query`);

/** What the filter of a lab query may hold, for the parameters that take one. */
const LAB_QUERY_HELP =
  'The filter: +term or term (required), -term (excluded), (a OR b), "exact topic name", word* (topic names, up to 25), year:A..B, year:A.., year:A';

/**
 * The filter, or a text holding it: POST /lab/quote's body, which MCP's lab_quote takes too (give
 * one; core/lab.ts's labQuoteInput reads them).
 */
export const LabQuoteFields = {
  query: z
    .string()
    .max(MAX_QUERY_LENGTH * 2)
    .optional()
    .describe(LAB_QUERY_HELP),
  markdown: z
    .string()
    .max(64 * 1024)
    .optional()
    .describe('A text whose ```query fenced block holds the filter'),
};

/** GET /lab/quote's q: the filter. */
export const LabQuoteText = z
  .string()
  .max(MAX_QUERY_LENGTH * 2)
  .openapi({ description: LAB_QUERY_HELP, example: 'perovskite -Pb year:2020..' });

export const QuoteId = z.string().min(1).max(100).describe('The quote_id of a quote');

/**
 * A quote by its quote_id or whole, and the depth: POST /lab/run's body, which MCP's lab_run takes
 * too (core/lab-service.ts's labRunRequest reads them).
 */
export const LabRunFields = {
  quote_id: QuoteId.optional(),
  quote: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('The whole quote as returned by the lab quote'),
  depth: DepthSchema,
};

const DeliverableSchema = z.object({
  papers: z
    .number()
    .int()
    .openapi({ description: 'Papers this depth delivers: its depth, or every match when fewer match' }),
  price: UsdSchema.openapi({ description: 'The binding price of the deliverable' }),
  run_price: UsdSchema.openapi({ description: 'What lab run charges: the price minus the quote price' }),
});

/** One optional deliverable per depth of the price table. */
const deliverablesShape = Object.fromEntries(
  Object.keys(LAB_DEPTHS).map((depth) => [depth, DeliverableSchema.optional()]),
) as Record<LabDepth, z.ZodOptional<typeof DeliverableSchema>>;

export const LabQuoteSchema = z
  .object({
    quote_id: z.string().openapi({ description: 'Same query on the same data: same quote_id' }),
    query: z.string().openapi({ description: 'The query in canonical form, as parsed' }),
    terms: z.array(
      z.object({
        term: z.string(),
        role: z.enum(['required', 'excluded', 'any_of']),
        subjects: z.array(
          z.object({
            subject_type: z.string(),
            subject_id: z.string(),
            name: z.string(),
            papers: z.number().int(),
          }),
        ),
        expansion: z
          .object({ matched: z.number().int(), truncated: z.boolean() })
          .optional()
          .openapi({ description: 'A wildcard: topic names matched, and whether the list was cut at 25' }),
      }),
    ),
    year: z.object({ from: z.number().int().nullable(), to: z.number().int().nullable() }).nullable(),
    matches: z.number().int(),
    years: z.array(z.object({ year: z.number().int().nullable(), papers: z.number().int() })),
    communities: z.array(
      z.object({ topic_id: z.string().nullable(), name: z.string().nullable(), papers: z.number().int() }),
    ),
    sample: z.object({ used: z.boolean(), size: z.number().int() }).openapi({
      description: 'used: years and communities are estimates from a fixed sample of the matches',
    }),
    deliverables: z.object(deliverablesShape).openapi({
      description:
        'The depths offered, each with the papers it delivers; a dearer depth only when it delivers more papers than the cheaper one',
    }),
    not_offered: z
      .array(
        z.object({
          depth: z.enum(Object.keys(LAB_DEPTHS) as [LabDepth, ...LabDepth[]]),
          papers: z.number().int().openapi({ description: 'Papers it would deliver' }),
          reason: z.string(),
        }),
      )
      .openapi({
        description:
          'The depths of the price table this quote does not offer, and why (nothing matches, a licence, or the same papers as a cheaper depth); a run of one is 400 depth_not_offered',
      }),
    licence: z
      .object({ detail: z.string(), contact_url: z.string() })
      .nullable()
      .openapi({
        description: `Above ${LAB_LICENCE_ABOVE.toLocaleString('en')} matches: a licence offer instead of a price`,
      }),
    ignored: z.array(
      z.object({
        term: z.string(),
        position: z.number().int(),
        reason: z.string(),
        suggestions: z.array(z.string()),
      }),
    ),
    broader: z.array(z.object({ query: z.string(), matches: z.number().int() })),
    price: UsdSchema.openapi({ description: 'What the quote itself costs' }),
    issued_at: z.string(),
    expires_at: z.string(),
    signature: z.string().openapi({ description: 'HMAC over the quote; an edited quote is refused' }),
    ...envelopeShape,
  })
  .openapi('LabQuote');
export type LabQuote = z.infer<typeof LabQuoteSchema>;

export const LabRunSchema = z
  .object({
    quote_id: z.string(),
    query: z.string(),
    depth: DepthSchema,
    matches: z.number().int(),
    price: UsdSchema,
    papers: z.array(PaperSchema),
    ...envelopeShape,
  })
  .openapi('LabRun');
export type LabRunAnswer = z.infer<typeof LabRunSchema>;

import { z } from '@hono/zod-openapi';
import { envelopeShape, UsdSchema } from './common.js';
import { integerParam } from './params.js';
import { LENSES, type Lens, MAX_PAGE_SIZE, MAX_PAGES } from './research-request.js';

const LensesQuery = z
  .string()
  .default(LENSES.join(','))
  .transform((s, ctx) => {
    const lenses = [
      ...new Set(
        s
          .split(',')
          .map((l) => l.trim())
          .filter(Boolean),
      ),
    ];
    const bad = lenses.filter((l) => !(LENSES as readonly string[]).includes(l));
    if (bad.length > 0 || lenses.length === 0) {
      ctx.addIssue({
        code: 'custom',
        message: `lenses are a comma list of ${LENSES.join(', ')} (got '${bad.join(',') || s}')`,
      });
      return z.NEVER;
    }
    return lenses as Lens[];
  })
  .openapi({ type: 'string' })
  .describe(`Comma list of ${LENSES.join(', ')}`);

/**
 * A research question's parameters, as REST's query and MCP's research tool take them (page_size
 * and page as integerParam reads a query string's digits or a tool call's JSON number).
 * core/research.ts's researchRequest turns them into the core's request.
 */
export function researchFields() {
  return {
    q: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .optional()
      .openapi({ example: 'oxygen evolution nickel iron' })
      .describe('The question, e.g. "oxygen evolution nickel iron"'),
    paper: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .optional()
      .describe('A DOI or title to start from, instead of q'),
    page_size: integerParam(1, MAX_PAGE_SIZE, MAX_PAGE_SIZE).describe('Papers per lens, 1-10'),
    lenses: LensesQuery,
    page: integerParam(1, MAX_PAGES, 1).describe(
      `Page, 1-${MAX_PAGES}, up to the answer's pages (past it: 404 page_out_of_range, never charged)`,
    ),
  };
}

export const ResearchPaperSchema = z.object({
  title: z.string().nullable(),
  doi: z.string().nullable(),
  openalex_id: z.string().openapi({ description: 'The OpenAlex work id (W2741809807)' }),
  link: z.string().url(),
  venue: z.string().nullable(),
  year: z.number().int().nullable(),
  citations: z.number().int().nullable(),
  impact_score: z.number().nullable(),
  reason: z.string().openapi({ description: 'The evidence, in one line' }),
});
export type ResearchPaper = z.infer<typeof ResearchPaperSchema>;

const CommunitySchema = z.object({
  subject_type: z.literal('topic'),
  subject_id: z.string(),
  name: z.string(),
  matching_papers: z.number().int(),
  rising: z.boolean(),
  reason: z.string(),
  canonical_url: z.string().url(),
});
export type Community = z.infer<typeof CommunitySchema>;

const ElementCommunitySchema = z.object({
  symbol: z.string(),
  topic_id: z.string(),
  topic_name: z.string(),
  papers: z.number().int(),
  rising: z.boolean(),
  reason: z.string(),
});
export type ElementCommunity = z.infer<typeof ElementCommunitySchema>;

export const ResearchSchema = z
  .object({
    q: z.string(),
    page: z.number().int(),
    page_size: z.number().int(),
    pages: z.number().int().openapi({
      description:
        'How many pages this answer has at this page_size and lenses (1-5); a page past it is 404 page_out_of_range, never charged',
    }),
    matched_papers: z.number().int(),
    communities: z.array(CommunitySchema),
    element_communities: z.array(ElementCommunitySchema),
    lists: z.object({
      foundational: z.array(ResearchPaperSchema).optional(),
      now: z.array(ResearchPaperSchema).optional(),
      newest: z.array(ResearchPaperSchema).optional(),
    }),
    unmatched_terms: z.array(z.string()),
    next: z
      .object({ url: z.string().url(), price: UsdSchema })
      .nullable()
      .openapi({ description: 'The following page and its price, or null after the last' }),
    ...envelopeShape,
  })
  .openapi('Research');
export type ResearchAnswer = z.infer<typeof ResearchSchema>;

import { type OpenAPIHono, z } from '@hono/zod-openapi';
import type { TypedResponse } from 'hono';
import { type ResearchAnswer, ResearchSchema } from '../../../contracts/research.js';
import { LENSES, type Lens, MAX_PAGES, type ResearchRequest, researchPage } from '../../../core/research.js';
import { inThread } from '../../../core/worker-pool.js';
import type { ResearchJson } from '../../../core/worker-tasks.js';
import type { AppEnv } from '../../context.js';
import { charge } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import { PinnedQuery, type RouteDeps, requireExactlyOne } from '../shared.js';

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
  .describe(`Comma list of ${LENSES.join(', ')} (default: all three)`);

/**
 * A research question's fields, as REST's query and MCP's research tool take them: `number` reads
 * page_size and page (z.coerce.number from a query string, z.number from a tool call's JSON).
 */
export function researchFields(number: () => z.ZodNumber) {
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
    page_size: number().int().min(1).max(10).default(10).describe('Papers per lens, 1-10'),
    lenses: LensesQuery,
    page: number()
      .int()
      .min(1)
      .max(MAX_PAGES)
      .default(1)
      .describe(
        `Page, 1-${MAX_PAGES}, up to the answer's pages (past it: 404 page_out_of_range, never charged)`,
      ),
  };
}

/** The core's request from the fields researchFields reads: a question or a paper, never both. */
export function researchRequest(f: {
  q?: string | undefined;
  paper?: string | undefined;
  page_size: number;
  lenses: Lens[];
  page: number;
}): ResearchRequest {
  requireExactlyOne({ q: f.q, paper: f.paper }, "'q' (a question) or 'paper' (a DOI or title)");
  return {
    ...(f.q !== undefined ? { q: f.q } : { paper: f.paper! }),
    pageSize: f.page_size,
    lenses: f.lenses,
    page: f.page,
  };
}

export function registerResearch(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'research',
    {
      summary: 'A question or a paper -> research communities and three reading lists',
      request: {
        query: z
          .object({
            ...researchFields(z.coerce.number),
            ...PinnedQuery,
          })
          .strict(),
      },
      ok: {
        description: 'Communities and reading lists',
        content: { 'application/json': { schema: ResearchSchema } },
      },
      errors: {
        404: 'Nothing matches the question (nothing_matched), the paper is not in the corpus (unknown_paper), or the page is past the last (page_out_of_range, with pages)',
      },
    },
    async (c) => {
      const request = researchRequest(c.req.valid('query'));
      // Research is costly: the payment is asked for (and checked) before the answer is computed,
      // except for a page after the first of a question whose page count is not known yet
      // (researchPage). A question nothing matches is a 404 after it, and is never charged.
      const snapshot = c.get('snapshot');
      // The answer comes as its JSON text (what c.json would write: the same bytes and content type),
      // so no object is copied across threads; typed as the JSON answer it is.
      const { json } = await researchPage(
        snapshot,
        request,
        () => charge(c),
        () =>
          (c.get('services').heavy ?? inThread).run<ResearchJson>(snapshot, {
            kind: 'researchJson',
            request,
            viewer: c.get('viewer'),
          }),
      );
      return c.body(json, 200, { 'Content-Type': 'application/json' }) as unknown as TypedResponse<
        ResearchAnswer,
        200,
        'json'
      >;
    },
  );
}

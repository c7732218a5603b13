import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { elementPapers } from '../../../core/papers.js';
import type { AppEnv } from '../../context.js';
import { jsonOrCsv } from '../../csv.js';
import { requireAccess, viewerOf } from '../../guard.js';
import { paid } from '../../payment.js';
import { csvContent, papersTable } from '../csv-tables.js';
import {
  errorResponses,
  LimitQuery,
  PinnedQuery,
  type RouteDeps,
  SortQuery,
  SymbolParam,
} from '../shared.js';
import { ElementPapersSchema } from './schema.js';

export function registerElementPapers(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const route = createRoute({
    operationId: 'getElementPapers',
    method: 'get',
    path: '/elements/{symbol}/papers',
    summary: "An element's top papers (at most 100 are ranked)",
    security: [{ bearer: [] }],
    middleware: [requireAccess('getElementPapers', deps.edition, deps.publicUrl)] as const,
    request: {
      params: SymbolParam,
      query: z
        .object({
          keyword: z
            .string()
            .min(1)
            .max(100)
            .optional()
            .openapi({ description: 'Only papers with this keyword (slug or name)' }),
          sort: SortQuery,
          limit: LimitQuery,
          ...PinnedQuery,
        })
        .strict(),
    },
    responses: {
      200: {
        description: 'The papers (JSON, or CSV with Accept: text/csv)',
        content: { 'application/json': { schema: ElementPapersSchema }, ...csvContent('The papers') },
      },
      ...errorResponses('keyed', {
        404: 'Unknown symbol (unknown_symbol), or unknown keyword (unknown_subject, with suggestions)',
      }),
    },
  });
  app.openapi(route, async (c) => {
    const q = c.req.valid('query');
    const viewer = viewerOf(c, deps.edition, deps.publicUrl);
    const options = { sort: q.sort, limit: q.limit, ...(q.keyword ? { keyword: q.keyword } : {}) };
    const answer = elementPapers(c.get('snapshot'), c.req.valid('param').symbol, options, viewer);
    return jsonOrCsv(c, await paid(c, answer), papersTable);
  });
}

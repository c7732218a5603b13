import type { OpenAPIHono } from '@hono/zod-openapi';
import { MAX_PAPER_LIMIT } from '../../../access/policy.js';
import { ElementPapersSchema } from '../../../contracts/elements.js';
import { SymbolParam } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { elementPapers } from '../../../core/papers.js';
import type { AppEnv } from '../../context.js';
import { jsonOrCsv } from '../../csv.js';
import { paid } from '../../payment.js';
import { csvContent, papersTable } from '../csv-tables.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerElementPapers(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getElementPapers',
    {
      summary: `An element's top papers (at most ${MAX_PAPER_LIMIT} are ranked)`,
      request: { params: SymbolParam, query: QUERIES.getElementPapers },
      ok: {
        description: 'The papers (JSON, or CSV with Accept: text/csv)',
        content: { 'application/json': { schema: ElementPapersSchema }, ...csvContent('The papers') },
      },
      errors: {
        404: 'Unknown symbol (unknown_symbol), or unknown keyword (unknown_subject, with suggestions)',
      },
    },
    async (c) => {
      const q = c.req.valid('query');
      const options = { sort: q.sort, limit: q.limit, ...(q.keyword ? { keyword: q.keyword } : {}) };
      const answer = elementPapers(c.get('snapshot'), c.req.valid('param').symbol, options, c.get('viewer'));
      return jsonOrCsv(c, await paid(c, answer), papersTable);
    },
  );
}

import type { OpenAPIHono } from '@hono/zod-openapi';
import { ElementListSchema } from '../../../contracts/elements.js';
import { QUERIES } from '../../../contracts/queries.js';
import { batchSymbols, listElements } from '../../../core/elements.js';
import type { AppEnv } from '../../context.js';
import { jsonOrCsv } from '../../csv.js';
import { csvContent, elementsTable } from '../csv-tables.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerListElements(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'listElements',
    {
      summary: 'All 118 elements (or those of symbols=Fe,Ni,Co) with their current RI, RIS and HRI',
      request: { query: QUERIES.listElements },
      ok: {
        description: 'All 118 elements by atomic number, or the symbols asked for in their order',
        content: { 'application/json': { schema: ElementListSchema }, ...csvContent('The elements') },
      },
      errors: {
        404: 'A symbol of symbols names no element (unknown_symbol, naming every unknown one, with suggestions)',
      },
    },
    (c) => {
      const { symbols } = c.req.valid('query');
      const only = symbols ? batchSymbols(symbols) : undefined;
      return jsonOrCsv(c, listElements(c.get('snapshot'), c.get('viewer'), only), elementsTable);
    },
  );
}

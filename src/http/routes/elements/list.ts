import { type OpenAPIHono, z } from '@hono/zod-openapi';
import { ElementListSchema, SymbolsQuery } from '../../../contracts/elements.js';
import { batchSymbols, listElements } from '../../../core/elements.js';
import type { AppEnv } from '../../context.js';
import { jsonOrCsv } from '../../csv.js';
import { csvContent, elementsTable } from '../csv-tables.js';
import { defineRoute } from '../define-route.js';
import { FormatQuery, PinnedQuery, type RouteDeps } from '../shared.js';

export function registerListElements(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'listElements',
    {
      summary: 'All 118 elements (or those of symbols=Fe,Ni,Co) with their current RI, RIS and HRI',
      request: {
        query: z.object({ symbols: SymbolsQuery.optional(), ...PinnedQuery, ...FormatQuery }).strict(),
      },
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

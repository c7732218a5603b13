import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { batchSymbols, listElements } from '../../../core/elements.js';
import type { AppEnv } from '../../context.js';
import { requireAccess, viewerOf } from '../../guard.js';
import { errorResponses, PinnedQuery, type RouteDeps } from '../shared.js';
import { ElementListSchema, SymbolsQuery } from './schema.js';

export function registerListElements(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const route = createRoute({
    operationId: 'listElements',
    method: 'get',
    path: '/elements',
    summary: 'All 118 elements (or those of symbols=Fe,Ni,Co) with their current RI, RIS and HRI',
    middleware: [requireAccess('listElements', deps.edition, deps.publicUrl)] as const,
    request: { query: z.object({ symbols: SymbolsQuery.optional(), ...PinnedQuery }).strict() },
    responses: {
      200: {
        description: 'All 118 elements by atomic number, or the symbols asked for in their order',
        content: { 'application/json': { schema: ElementListSchema } },
      },
      ...errorResponses('public', {
        404: 'A symbol of symbols names no element (unknown_symbol, naming every unknown one, with suggestions)',
      }),
    },
  });
  app.openapi(route, (c) => {
    const { symbols } = c.req.valid('query');
    const viewer = viewerOf(c, deps.edition, deps.publicUrl);
    return c.json(listElements(c.get('snapshot'), viewer, symbols ? batchSymbols(symbols) : undefined), 200);
  });
}

import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { getElement } from '../../../core/elements.js';
import type { AppEnv } from '../../context.js';
import { requireAccess, viewerOf } from '../../guard.js';
import { errorResponses, PinnedQuery, type RouteDeps, SymbolParam } from '../shared.js';
import { ElementSchema } from './schema.js';

export function registerGetElement(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const route = createRoute({
    operationId: 'getElement',
    method: 'get',
    path: '/elements/{symbol}',
    summary: 'One element: current RI, RIS and HRI',
    middleware: [requireAccess('getElement', deps.edition, deps.publicUrl)] as const,
    request: { params: SymbolParam, query: z.object(PinnedQuery).strict() },
    responses: {
      200: { description: 'The element', content: { 'application/json': { schema: ElementSchema } } },
      ...errorResponses('public', { 404: 'Unknown symbol (unknown_symbol), with suggestions' }),
    },
  });
  app.openapi(route, (c) =>
    c.json(
      getElement(c.get('snapshot'), c.req.valid('param').symbol, viewerOf(c, deps.edition, deps.publicUrl)),
      200,
    ),
  );
}

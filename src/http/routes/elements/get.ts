import { type OpenAPIHono, z } from '@hono/zod-openapi';
import { ElementSchema } from '../../../contracts/elements.js';
import { getElement } from '../../../core/elements.js';
import type { AppEnv } from '../../context.js';
import { defineRoute } from '../define-route.js';
import { PinnedQuery, type RouteDeps, SymbolParam } from '../shared.js';

export function registerGetElement(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getElement',
    {
      summary: 'One element: current RI, RIS and HRI',
      request: { params: SymbolParam, query: z.object(PinnedQuery).strict() },
      ok: { description: 'The element', content: { 'application/json': { schema: ElementSchema } } },
      errors: { 404: 'Unknown symbol (unknown_symbol), with suggestions' },
    },
    (c) => c.json(getElement(c.get('snapshot'), c.req.valid('param').symbol, c.get('viewer')), 200),
  );
}

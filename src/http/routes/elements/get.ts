import type { OpenAPIHono } from '@hono/zod-openapi';
import { ElementSchema } from '../../../contracts/elements.js';
import { SymbolParam } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { getElement } from '../../../core/elements.js';
import type { AppEnv } from '../../context.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerGetElement(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getElement',
    {
      summary: 'One element: current RI, RIS and HRI',
      request: { params: SymbolParam, query: QUERIES.getElement },
      ok: { description: 'The element', content: { 'application/json': { schema: ElementSchema } } },
      errors: { 404: 'Unknown symbol (unknown_symbol), with suggestions' },
    },
    (c) => c.json(getElement(c.get('snapshot'), c.req.valid('param').symbol, c.get('viewer')), 200),
  );
}

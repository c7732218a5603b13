import type { OpenAPIHono } from '@hono/zod-openapi';
import { SubjectChangesSchema } from '../../../contracts/changes.js';
import { SymbolParam } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { elementChanges } from '../../../core/changes.js';
import type { AppEnv } from '../../context.js';
import { paid } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerElementChanges(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getElementChanges',
    {
      summary:
        'What moved of an element at each publication (RI, RIS, HRI, rank): since a data version, or all kept',
      request: { params: SymbolParam, query: QUERIES.getElementChanges },
      ok: {
        description: "The element's changes",
        content: { 'application/json': { schema: SubjectChangesSchema } },
      },
      errors: {
        404: 'Unknown symbol (unknown_symbol), or since names no data version these changes follow (unknown_data_version)',
      },
    },
    async (c) => {
      const { since, min_move, direction, limit } = c.req.valid('query');
      const answer = elementChanges(
        c.get('snapshot'),
        c.req.valid('param').symbol,
        { since, min_move, direction, limit },
        c.get('viewer'),
      );
      return c.json(await paid(c, answer), 200);
    },
  );
}

import type { OpenAPIHono } from '@hono/zod-openapi';
import { ChangesSchema } from '../../../contracts/changes.js';
import { QUERIES } from '../../../contracts/queries.js';
import { listChanges } from '../../../core/changes.js';
import type { AppEnv } from '../../context.js';
import { checkKinds } from '../../guard.js';
import { paid } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerListChanges(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'listChanges',
    {
      summary:
        'What moved per subject at each publication since a data version (RI, RIS, HRI, rank, rising, new), filtered by kind, move and direction',
      request: { query: QUERIES.listChanges },
      ok: { description: 'The changes', content: { 'application/json': { schema: ChangesSchema } } },
      errors: { 404: 'since names no data version these changes follow (unknown_data_version)' },
    },
    async (c) => {
      const { kind, since, min_move, direction, limit } = c.req.valid('query');
      checkKinds(c, kind);
      const answer = listChanges(
        c.get('snapshot'),
        kind,
        { since, min_move, direction, limit },
        c.get('viewer'),
      );
      return c.json(await paid(c, answer), 200);
    },
  );
}

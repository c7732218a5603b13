import type { OpenAPIHono } from '@hono/zod-openapi';
import { batchPrice, operation } from '../../../access/policy.js';
import { ElementHistoriesSchema } from '../../../contracts/elements.js';
import { QUERIES } from '../../../contracts/queries.js';
import { batchSymbols } from '../../../core/elements.js';
import { elementHistories, MAX_HISTORY_BATCH } from '../../../core/history.js';
import type { AppEnv } from '../../context.js';
import { jsonOrCsv } from '../../csv.js';
import { checkResolution } from '../../guard.js';
import { paid } from '../../payment.js';
import { csvContent, historiesTable } from '../csv-tables.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

/**
 * Several elements' histories in one call: the access of one element's history, and without a
 * key the per-symbol price times the symbols. Registered before /elements/{symbol}, which would
 * otherwise read "history" as a symbol.
 */
export function registerElementHistories(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const op = operation('getElementHistories');
  defineRoute(
    app,
    deps,
    'getElementHistories',
    {
      summary: `Histories of up to ${MAX_HISTORY_BATCH} elements in one call (symbols=Fe,Ni,Co), priced per symbol`,
      request: { query: QUERIES.getElementHistories },
      ok: {
        description: 'One history per symbol, in the order given (JSON, or CSV with Accept: text/csv)',
        content: {
          'application/json': { schema: ElementHistoriesSchema },
          ...csvContent('One record per symbol and period'),
        },
      },
      errors: {
        404: 'A symbol names no element (unknown_symbol, naming every unknown one, with suggestions)',
      },
    },
    async (c) => {
      const { symbols, resolution, from, to, last } = c.req.valid('query');
      checkResolution(c, resolution);
      const list = batchSymbols(symbols, MAX_HISTORY_BATCH);
      const range = { from, to, last };
      const answer = elementHistories(c.get('snapshot'), list, resolution, c.get('viewer'), range);
      return jsonOrCsv(c, await paid(c, answer, batchPrice(op, list.length) ?? undefined), historiesTable);
    },
  );
}

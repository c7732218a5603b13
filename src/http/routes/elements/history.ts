import type { OpenAPIHono } from '@hono/zod-openapi';
import { ElementHistorySchema } from '../../../contracts/elements.js';
import { SymbolParam } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { canonicalSymbol } from '../../../core/elements.js';
import { elementHistory } from '../../../core/history.js';
import type { AppEnv } from '../../context.js';
import { jsonOrCsv } from '../../csv.js';
import { checkResolution } from '../../guard.js';
import { charge } from '../../payment.js';
import { csvContent, historyTable } from '../csv-tables.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerElementHistory(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getElementHistory',
    {
      summary: 'Full history of an element (RI, RIS, HRI per period)',
      request: { params: SymbolParam, query: QUERIES.getElementHistory },
      ok: {
        description: 'The history (JSON, or CSV with Accept: text/csv)',
        content: { 'application/json': { schema: ElementHistorySchema }, ...csvContent('The series') },
      },
      errors: { 404: 'Unknown symbol (unknown_symbol)' },
    },
    async (c) => {
      const { resolution } = c.req.valid('query');
      checkResolution(c, resolution);
      const symbol = c.req.valid('param').symbol;
      // Its own 404 first; then the payment (an unpaid call's 402 costs no history read).
      canonicalSymbol(symbol);
      await charge(c);
      const answer = elementHistory(c.get('snapshot'), symbol, resolution, c.get('viewer'));
      return jsonOrCsv(c, answer, historyTable);
    },
  );
}

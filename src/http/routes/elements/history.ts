import type { OpenAPIHono } from '@hono/zod-openapi';
import { ElementHistorySchema } from '../../../contracts/elements.js';
import { SymbolParam } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { canonicalSymbol } from '../../../core/elements.js';
import { elementHistory } from '../../../core/history.js';
import { historyRange } from '../../../core/history-range.js';
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
      summary:
        'History of an element (RI, RIS, HRI per period): all of it, or from..to, or the last N periods',
      request: { params: SymbolParam, query: QUERIES.getElementHistory },
      ok: {
        description: 'The history (JSON, or CSV with Accept: text/csv)',
        content: { 'application/json': { schema: ElementHistorySchema }, ...csvContent('The series') },
      },
      errors: { 404: 'Unknown symbol (unknown_symbol)' },
    },
    async (c) => {
      const { resolution, from, to, last } = c.req.valid('query');
      checkResolution(c, resolution);
      const symbol = c.req.valid('param').symbol;
      // Its own 400 and 404 first; then the payment (an unpaid call's 402 costs no history read).
      const range = historyRange(resolution, { from, to, last });
      canonicalSymbol(symbol);
      await charge(c);
      const answer = elementHistory(c.get('snapshot'), symbol, resolution, c.get('viewer'), range);
      return jsonOrCsv(c, answer, historyTable);
    },
  );
}

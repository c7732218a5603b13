import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { RESOLUTION_ACCESS } from '../../../access/policy.js';
import { elementHistory } from '../../../core/history.js';
import type { AppEnv } from '../../context.js';
import { jsonOrCsv } from '../../csv.js';
import { checkAccess, requireAccess, viewerOf } from '../../guard.js';
import { paid } from '../../payment.js';
import { csvContent, historyTable } from '../csv-tables.js';
import { errorResponses, PinnedQuery, ResolutionQuery, type RouteDeps, SymbolParam } from '../shared.js';
import { ElementHistorySchema } from './schema.js';

export function registerElementHistory(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const route = createRoute({
    operationId: 'getElementHistory',
    method: 'get',
    path: '/elements/{symbol}/history',
    summary: 'Full history of an element (RI, RIS, HRI per period)',
    security: [{ bearer: [] }],
    middleware: [requireAccess('getElementHistory', deps.edition, deps.publicUrl)] as const,
    request: {
      params: SymbolParam,
      query: z.object({ resolution: ResolutionQuery, ...PinnedQuery }).strict(),
    },
    responses: {
      200: {
        description: 'The history (JSON, or CSV with Accept: text/csv)',
        content: { 'application/json': { schema: ElementHistorySchema }, ...csvContent('The series') },
      },
      ...errorResponses('keyed', { 404: 'Unknown symbol (unknown_symbol)' }),
    },
  });
  app.openapi(route, async (c) => {
    const { resolution } = c.req.valid('query');
    checkAccess(c, RESOLUTION_ACCESS[resolution], deps.edition, deps.publicUrl, `resolution=${resolution}`);
    const viewer = viewerOf(c, deps.edition, deps.publicUrl);
    const answer = elementHistory(c.get('snapshot'), c.req.valid('param').symbol, resolution, viewer);
    return jsonOrCsv(c, await paid(c, answer), historyTable);
  });
}

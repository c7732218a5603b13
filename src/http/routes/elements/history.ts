import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { RESOLUTION_ACCESS } from '../../../access/policy.js';
import { elementHistory } from '../../../core/history.js';
import type { AppEnv } from '../../context.js';
import { checkAccess, requireAccess, viewerOf } from '../../guard.js';
import { paid } from '../../payment.js';
import { errorResponses, ResolutionQuery, type RouteDeps, SymbolParam } from '../shared.js';
import { ElementHistorySchema } from './schema.js';

export function registerElementHistory(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const route = createRoute({
    operationId: 'getElementHistory',
    method: 'get',
    path: '/elements/{symbol}/history',
    summary: 'Full history of an element (RI, RIS, HRI per period)',
    security: [{ bearer: [] }],
    middleware: [requireAccess('getElementHistory', deps.edition, deps.publicUrl)] as const,
    request: { params: SymbolParam, query: z.object({ resolution: ResolutionQuery }).strict() },
    responses: {
      200: { description: 'The history', content: { 'application/json': { schema: ElementHistorySchema } } },
      ...errorResponses('keyed', { 404: 'Unknown symbol (unknown_symbol)' }),
    },
  });
  app.openapi(route, async (c) => {
    const { resolution } = c.req.valid('query');
    checkAccess(c, RESOLUTION_ACCESS[resolution], deps.edition, deps.publicUrl, `resolution=${resolution}`);
    const viewer = viewerOf(c, deps.edition, deps.publicUrl);
    return c.json(
      await paid(c, elementHistory(c.get('snapshot'), c.req.valid('param').symbol, resolution, viewer)),
      200,
    );
  });
}

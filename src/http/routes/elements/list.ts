import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { listElements } from '../../../core/elements.js';
import type { AppEnv } from '../../context.js';
import { requireAccess, viewerOf } from '../../guard.js';
import { errorResponses, type RouteDeps } from '../shared.js';
import { ElementListSchema } from './schema.js';

export function registerListElements(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const route = createRoute({
    operationId: 'listElements',
    method: 'get',
    path: '/elements',
    summary: 'All 118 elements with their current RI, RIS and HRI',
    middleware: [requireAccess('listElements', deps.edition, deps.publicUrl)] as const,
    request: { query: z.object({}).strict() },
    responses: {
      200: {
        description: 'All 118 elements',
        content: { 'application/json': { schema: ElementListSchema } },
      },
      ...errorResponses('public'),
    },
  });
  app.openapi(route, (c) =>
    c.json(listElements(c.get('snapshot'), viewerOf(c, deps.edition, deps.publicUrl)), 200),
  );
}

import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { listElements } from '../../../core/elements.js';
import type { AppEnv } from '../../context.js';
import { viewerOf } from '../../viewer.js';
import { ElementListSchema, problem } from './schema.js';

const route = createRoute({
  method: 'get',
  path: '/elements',
  summary: 'All 118 elements with their current RI, RIS and HRI',
  responses: {
    200: { description: 'All 118 elements', content: { 'application/json': { schema: ElementListSchema } } },
    503: problem('No snapshot can be read (temporary)'),
  },
});

export function registerListElements(app: OpenAPIHono<AppEnv>, publicUrl: string): void {
  app.openapi(route, (c) => c.json(listElements(c.get('snapshot'), viewerOf(c, publicUrl)), 200));
}

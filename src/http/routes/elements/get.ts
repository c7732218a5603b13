import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { getElement } from '../../../core/elements.js';
import type { AppEnv } from '../../context.js';
import { viewerOf } from '../../viewer.js';
import { ElementSchema, problem } from './schema.js';

const route = createRoute({
  method: 'get',
  path: '/elements/{symbol}',
  summary: 'One element: current RI, RIS and HRI',
  request: {
    params: z.object({
      symbol: z
        .string()
        .min(1)
        .max(40)
        .openapi({
          param: { name: 'symbol', in: 'path' },
          example: 'Fe',
          description: 'Chemical symbol, any case',
        }),
    }),
  },
  responses: {
    200: { description: 'The element', content: { 'application/json': { schema: ElementSchema } } },
    404: problem('Unknown symbol (code unknown_symbol), with suggestions'),
    503: problem('No snapshot can be read (temporary)'),
  },
});

export function registerGetElement(app: OpenAPIHono<AppEnv>, publicUrl: string): void {
  app.openapi(route, (c) =>
    c.json(getElement(c.get('snapshot'), c.req.valid('param').symbol, viewerOf(c, publicUrl)), 200),
  );
}

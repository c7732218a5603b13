import type { OpenAPIHono } from '@hono/zod-openapi';
import { OPERATIONS, planLadder } from '../access/policy.js';
import type { AppEnv } from './context.js';
import type { RouteDeps } from './routes/shared.js';

/**
 * The machine-readable reference at /v1/openapi.json, generated from the route schemas:
 * OpenAPI 3.0.3, info.version 1.0.0, one HTTP bearer scheme required by default; the two
 * public element routes accept no credentials or the bearer.
 */
export function registerOpenApi(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key: Authorization: Bearer <API_KEY>',
  });
  app.get('/openapi.json', (c) => {
    const doc = app.getOpenAPIDocument({
      openapi: '3.0.3',
      info: {
        title: 'Research-Intensity Data Service',
        version: '1.0.0',
        description: `RI, RIS and HRI for the 118 elements and for research topics and keywords. Plans: ${planLadder(deps.edition).join(', ')}.`,
      },
      servers: [{ url: `${deps.publicUrl}/v1` }],
      security: [{ bearer: [] }],
    });
    // Access level per operation from the policy table; public routes take no credentials or the bearer.
    for (const op of OPERATIONS) {
      const item = doc.paths?.[op.path]?.[op.method.toLowerCase() as 'get' | 'post'];
      if (!item) continue;
      if (op.access === 'public') item.security = [{}, { bearer: [] }];
      (item as unknown as Record<string, unknown>)['x-access'] = op.access;
    }
    return c.json(doc);
  });
}

import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { searchSubjects } from '../../../core/subjects.js';
import type { AppEnv } from '../../context.js';
import { requireAccess, viewerOf } from '../../guard.js';
import { paid } from '../../payment.js';
import { errorResponses, PinnedQuery, type RouteDeps } from '../shared.js';
import { SubjectSearchSchema } from './schema.js';

export function registerSearchSubjects(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const route = createRoute({
    operationId: 'searchSubjects',
    method: 'get',
    path: '/subjects/search',
    summary: 'Resolve free text to topics and keywords (subject_type, subject_id)',
    security: [{ bearer: [] }],
    middleware: [requireAccess('searchSubjects', deps.edition, deps.publicUrl)] as const,
    request: {
      query: z
        .object({
          q: z
            .string()
            .trim()
            .min(1)
            .max(200)
            .openapi({ description: 'Free text, 1-200 characters', example: 'oxygen evolution' }),
          ...PinnedQuery,
        })
        .strict(),
    },
    responses: {
      200: {
        description: 'Ranked candidates',
        content: { 'application/json': { schema: SubjectSearchSchema } },
      },
      ...errorResponses('keyed'),
    },
  });
  app.openapi(route, async (c) =>
    c.json(
      await paid(
        c,
        searchSubjects(c.get('snapshot'), c.req.valid('query').q, viewerOf(c, deps.edition, deps.publicUrl)),
      ),
      200,
    ),
  );
}

import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { subjectElements } from '../../../core/subjects.js';
import type { AppEnv } from '../../context.js';
import { requireAccess, viewerOf } from '../../guard.js';
import { paid } from '../../payment.js';
import { errorResponses, PinnedQuery, type RouteDeps, SubjectParams } from '../shared.js';
import { SubjectElementsSchema } from './schema.js';

export function registerSubjectElements(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const route = createRoute({
    operationId: 'getSubjectElements',
    method: 'get',
    path: '/subjects/{subject_type}/{subject_id}/elements',
    summary: 'The top 10 elements a topic or keyword is routed to',
    security: [{ bearer: [] }],
    middleware: [requireAccess('getSubjectElements', deps.edition, deps.publicUrl)] as const,
    request: { params: SubjectParams, query: z.object(PinnedQuery).strict() },
    responses: {
      200: {
        description: 'The routed elements',
        content: { 'application/json': { schema: SubjectElementsSchema } },
      },
      ...errorResponses('keyed', {
        404: 'Unknown subject, or a topic with no element links (unknown_subject)',
      }),
    },
  });
  app.openapi(route, async (c) => {
    const { subject_type, subject_id } = c.req.valid('param');
    return c.json(
      await paid(
        c,
        subjectElements(
          c.get('snapshot'),
          subject_type,
          subject_id,
          viewerOf(c, deps.edition, deps.publicUrl),
        ),
      ),
      200,
    );
  });
}

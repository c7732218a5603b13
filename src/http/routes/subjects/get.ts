import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { getSubject } from '../../../core/subjects.js';
import type { AppEnv } from '../../context.js';
import { requireAccess, viewerOf } from '../../guard.js';
import { paid } from '../../payment.js';
import { errorResponses, PinnedQuery, type RouteDeps, SubjectParams } from '../shared.js';
import { SubjectSchema } from './schema.js';

export function registerGetSubject(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const route = createRoute({
    operationId: 'getSubject',
    method: 'get',
    path: '/subjects/{subject_type}/{subject_id}',
    summary: 'RI, RIS, HRI and paper_count of a topic or keyword',
    security: [{ bearer: [] }],
    middleware: [requireAccess('getSubject', deps.edition, deps.publicUrl)] as const,
    request: { params: SubjectParams, query: z.object(PinnedQuery).strict() },
    responses: {
      200: { description: 'The subject', content: { 'application/json': { schema: SubjectSchema } } },
      ...errorResponses('keyed', { 404: 'Unknown subject (unknown_subject), with suggestions' }),
    },
  });
  app.openapi(route, async (c) => {
    const { subject_type, subject_id } = c.req.valid('param');
    return c.json(
      await paid(
        c,
        getSubject(c.get('snapshot'), subject_type, subject_id, viewerOf(c, deps.edition, deps.publicUrl)),
      ),
      200,
    );
  });
}

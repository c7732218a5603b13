import type { OpenAPIHono } from '@hono/zod-openapi';
import { SubjectParams } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { SubjectElementsSchema } from '../../../contracts/subjects.js';
import { subjectElements } from '../../../core/subjects.js';
import type { AppEnv } from '../../context.js';
import { paid } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerSubjectElements(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getSubjectElements',
    {
      summary: 'The top 10 elements a topic or keyword is routed to',
      request: { params: SubjectParams, query: QUERIES.getSubjectElements },
      ok: {
        description: 'The routed elements',
        content: { 'application/json': { schema: SubjectElementsSchema } },
      },
      errors: { 404: 'Unknown subject, or a topic with no element links (unknown_subject)' },
    },
    async (c) => {
      const { subject_type, subject_id } = c.req.valid('param');
      const answer = subjectElements(c.get('snapshot'), subject_type, subject_id, c.get('viewer'));
      return c.json(await paid(c, answer), 200);
    },
  );
}

import type { OpenAPIHono } from '@hono/zod-openapi';
import { SubjectParams } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { SubjectSchema } from '../../../contracts/subjects.js';
import { getSubject } from '../../../core/subjects.js';
import type { AppEnv } from '../../context.js';
import { paid } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerGetSubject(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getSubject',
    {
      summary: 'RI, RIS, HRI and paper_count of a topic or keyword',
      request: { params: SubjectParams, query: QUERIES.getSubject },
      ok: { description: 'The subject', content: { 'application/json': { schema: SubjectSchema } } },
      errors: { 404: 'Unknown subject (unknown_subject), with suggestions' },
    },
    async (c) => {
      const { subject_type, subject_id } = c.req.valid('param');
      const answer = getSubject(c.get('snapshot'), subject_type, subject_id, c.get('viewer'));
      return c.json(await paid(c, answer), 200);
    },
  );
}

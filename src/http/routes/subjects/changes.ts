import type { OpenAPIHono } from '@hono/zod-openapi';
import { SubjectChangesSchema } from '../../../contracts/changes.js';
import { SubjectParams } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { subjectChanges } from '../../../core/changes.js';
import type { AppEnv } from '../../context.js';
import { paid } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerSubjectChanges(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getSubjectChanges',
    {
      summary:
        'What moved of a topic or keyword at each publication (RI, RIS, HRI, rank, rising): since a data version, or all kept',
      request: { params: SubjectParams, query: QUERIES.getSubjectChanges },
      ok: {
        description: "The subject's changes",
        content: { 'application/json': { schema: SubjectChangesSchema } },
      },
      errors: {
        404: 'Unknown subject (unknown_subject), or since names no data version these changes follow (unknown_data_version)',
      },
    },
    async (c) => {
      const { subject_type, subject_id } = c.req.valid('param');
      const { since, min_move, direction, limit } = c.req.valid('query');
      const answer = subjectChanges(
        c.get('snapshot'),
        subject_type,
        subject_id,
        { since, min_move, direction, limit },
        c.get('viewer'),
      );
      return c.json(await paid(c, answer), 200);
    },
  );
}

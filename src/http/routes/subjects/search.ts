import type { OpenAPIHono } from '@hono/zod-openapi';
import { QUERIES } from '../../../contracts/queries.js';
import { SubjectSearchSchema } from '../../../contracts/subjects.js';
import { searchSubjects } from '../../../core/subjects.js';
import type { AppEnv } from '../../context.js';
import { paid } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerSearchSubjects(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'searchSubjects',
    {
      summary: 'Resolve free text to topics and keywords (subject_type, subject_id)',
      request: { query: QUERIES.searchSubjects },
      ok: {
        description: 'Ranked candidates',
        content: { 'application/json': { schema: SubjectSearchSchema } },
      },
    },
    async (c) => {
      const answer = searchSubjects(c.get('snapshot'), c.req.valid('query').q, c.get('viewer'));
      return c.json(await paid(c, answer), 200);
    },
  );
}

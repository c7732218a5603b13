import type { OpenAPIHono } from '@hono/zod-openapi';
import { MAX_PAPER_LIMIT } from '../../../access/policy.js';
import { SubjectParams } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { SubjectPapersSchema } from '../../../contracts/subjects.js';
import { subjectPapers } from '../../../core/papers.js';
import type { AppEnv } from '../../context.js';
import { jsonOrCsv } from '../../csv.js';
import { paid } from '../../payment.js';
import { csvContent, papersTable } from '../csv-tables.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerSubjectPapers(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getSubjectPapers',
    {
      summary: `A topic's or keyword's top papers (at most ${MAX_PAPER_LIMIT} are ranked)`,
      request: { params: SubjectParams, query: QUERIES.getSubjectPapers },
      ok: {
        description: 'The papers (JSON, or CSV with Accept: text/csv)',
        content: { 'application/json': { schema: SubjectPapersSchema }, ...csvContent('The papers') },
      },
      errors: { 404: 'Unknown subject (unknown_subject)' },
    },
    async (c) => {
      const { subject_type, subject_id } = c.req.valid('param');
      const { sort, limit } = c.req.valid('query');
      const answer = subjectPapers(
        c.get('snapshot'),
        subject_type,
        subject_id,
        { sort, limit },
        c.get('viewer'),
      );
      return jsonOrCsv(c, await paid(c, answer), papersTable);
    },
  );
}

import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { subjectPapers } from '../../../core/papers.js';
import type { AppEnv } from '../../context.js';
import { jsonOrCsv } from '../../csv.js';
import { requireAccess, viewerOf } from '../../guard.js';
import { paid } from '../../payment.js';
import { csvContent, papersTable } from '../csv-tables.js';
import {
  errorResponses,
  LimitQuery,
  PinnedQuery,
  type RouteDeps,
  SortQuery,
  SubjectParams,
} from '../shared.js';
import { SubjectPapersSchema } from './schema.js';

export function registerSubjectPapers(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  const route = createRoute({
    operationId: 'getSubjectPapers',
    method: 'get',
    path: '/subjects/{subject_type}/{subject_id}/papers',
    summary: "A topic's or keyword's top papers (at most 100 are ranked)",
    security: [{ bearer: [] }],
    middleware: [requireAccess('getSubjectPapers', deps.edition, deps.publicUrl)] as const,
    request: {
      params: SubjectParams,
      query: z.object({ sort: SortQuery, limit: LimitQuery, ...PinnedQuery }).strict(),
    },
    responses: {
      200: {
        description: 'The papers (JSON, or CSV with Accept: text/csv)',
        content: { 'application/json': { schema: SubjectPapersSchema }, ...csvContent('The papers') },
      },
      ...errorResponses('keyed', { 404: 'Unknown subject (unknown_subject)' }),
    },
  });
  app.openapi(route, async (c) => {
    const { subject_type, subject_id } = c.req.valid('param');
    const q = c.req.valid('query');
    const viewer = viewerOf(c, deps.edition, deps.publicUrl);
    const options = { sort: q.sort, limit: q.limit };
    const answer = subjectPapers(c.get('snapshot'), subject_type, subject_id, options, viewer);
    return jsonOrCsv(c, await paid(c, answer), papersTable);
  });
}

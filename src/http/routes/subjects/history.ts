import type { OpenAPIHono } from '@hono/zod-openapi';
import { SubjectParams } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { SubjectHistorySchema } from '../../../contracts/subjects.js';
import { subjectHistory } from '../../../core/history.js';
import type { AppEnv } from '../../context.js';
import { jsonOrCsv } from '../../csv.js';
import { checkResolution } from '../../guard.js';
import { paid } from '../../payment.js';
import { csvContent, historyTable } from '../csv-tables.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerSubjectHistory(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getSubjectHistory',
    {
      summary:
        'History of a topic or keyword (yearly or monthly): all of it, or from..to, or the last N periods',
      request: { params: SubjectParams, query: QUERIES.getSubjectHistory },
      ok: {
        description: 'The history (JSON, or CSV with Accept: text/csv)',
        content: { 'application/json': { schema: SubjectHistorySchema }, ...csvContent('The series') },
      },
      errors: { 404: 'Unknown subject (unknown_subject)' },
    },
    async (c) => {
      const { resolution, from, to, last } = c.req.valid('query');
      const { subject_type, subject_id } = c.req.valid('param');
      if (resolution !== 'daily') checkResolution(c, resolution);
      const answer = subjectHistory(
        c.get('snapshot'),
        subject_type,
        subject_id,
        resolution,
        c.get('viewer'),
        {
          from,
          to,
          last,
        },
      );
      return jsonOrCsv(c, await paid(c, answer), historyTable);
    },
  );
}

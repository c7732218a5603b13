import type { OpenAPIHono } from '@hono/zod-openapi';
import { SubjectParams } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { subjectSparkline } from '../../../core/badges.js';
import type { AppEnv } from '../../context.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';
import { sparklineSvg, svgAnswer, svgResponse } from './svg.js';

/** GET /v1/badges/subjects/{type}/{id}/history.svg: with a feed token of the Personal plan, as its history needs. */
export function registerSubjectHistoryBadge(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getSubjectHistoryBadge',
    {
      summary: "An SVG sparkline of a topic's or keyword's yearly RIS, to embed in a page",
      request: { params: SubjectParams, query: QUERIES.getSubjectHistoryBadge },
      ok: svgAnswer("The subject's sparkline"),
      errors: { 404: 'Unknown subject (unknown_subject)' },
    },
    (c) => {
      const { subject_type, subject_id } = c.req.valid('param');
      const line = subjectSparkline(c.get('snapshot'), subject_type, subject_id, c.get('viewer'));
      return svgResponse(c, sparklineSvg(line), line.data_version);
    },
  );
}

import type { OpenAPIHono } from '@hono/zod-openapi';
import { SubjectSvgParams } from '../../../contracts/badges.js';
import { QUERIES } from '../../../contracts/queries.js';
import { subjectBadge } from '../../../core/badges.js';
import type { AppEnv } from '../../context.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';
import { badgeSvg, svgAnswer, svgResponse } from './svg.js';

/** GET /v1/badges/subjects/{type}/{id}.svg: with a feed token of the Personal plan, as a subject's scores need. */
export function registerSubjectBadge(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getSubjectBadge',
    {
      summary:
        "An SVG badge of a topic's or keyword's current RIS, to embed in a page (its data version in its title)",
      request: { params: SubjectSvgParams, query: QUERIES.getSubjectBadge },
      ok: svgAnswer("The subject's badge"),
      errors: { 404: 'Unknown subject (unknown_subject)' },
    },
    (c) => {
      const { subject_type, subject_id } = c.req.valid('param');
      const badge = subjectBadge(c.get('snapshot'), subject_type, subject_id, c.get('viewer'));
      return svgResponse(c, badgeSvg(badge), badge.data_version);
    },
  );
}

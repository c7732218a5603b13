import type { OpenAPIHono } from '@hono/zod-openapi';
import { SubjectParams } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { topicFeed } from '../../../core/feeds.js';
import type { AppEnv } from '../../context.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';
import { atomAnswer, atomResponse } from './atom.js';

/** GET /v1/feeds/subjects/{type}/{id}: with a feed token of the Personal plan (the changes' own). */
export function registerSubjectFeed(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getSubjectFeed',
    {
      summary: "An Atom feed of a topic's or keyword's changes: an entry per publication it moved in",
      request: { params: SubjectParams, query: QUERIES.getSubjectFeed },
      ok: atomAnswer("The subject's feed"),
      errors: { 404: 'Unknown subject (unknown_subject)' },
    },
    (c) => {
      const { subject_type, subject_id } = c.req.valid('param');
      return atomResponse(c, topicFeed(c.get('snapshot'), subject_type, subject_id, c.get('viewer')));
    },
  );
}

import type { OpenAPIHono } from '@hono/zod-openapi';
import { feedLevel } from '../../../access/policy.js';
import { QUERIES } from '../../../contracts/queries.js';
import { subjectSetFeed } from '../../../core/feeds.js';
import type { AppEnv } from '../../context.js';
import { checkFeed } from '../../guard.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';
import { atomAnswer, atomResponse } from './atom.js';

/**
 * GET /v1/feeds/subjects?subjects=...: a set of subjects named in the URL. Open for elements
 * alone; a topic or keyword in the set makes it take a feed token (feedLevel).
 */
export function registerSubjectSetFeed(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getSubjectSetFeed',
    {
      summary: 'An Atom feed of the changes of a set of subjects named in the URL',
      request: { query: QUERIES.getSubjectSetFeed },
      ok: atomAnswer("The set's feed, newest publication first"),
      errors: { 404: 'A subject is unknown (unknown_symbol, unknown_subject)' },
    },
    (c) => {
      const { subjects } = c.req.valid('query');
      const kinds = [...new Set(subjects.map((s) => s.type))];
      checkFeed(c, feedLevel(kinds), deps.edition, deps.publicUrl, `A feed of ${kinds.join(', ')} changes`);
      return atomResponse(c, subjectSetFeed(c.get('snapshot'), subjects, c.get('viewer')));
    },
  );
}

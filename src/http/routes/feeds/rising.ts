import type { OpenAPIHono } from '@hono/zod-openapi';
import { feedLevel } from '../../../access/policy.js';
import { QUERIES } from '../../../contracts/queries.js';
import { risingFeed } from '../../../core/feeds.js';
import type { AppEnv } from '../../context.js';
import { checkFeed } from '../../guard.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';
import { atomAnswer, atomResponse } from './atom.js';

/** GET /v1/feeds/rising?kind=: open for elements; topics and keywords take a feed token (feedLevel). */
export function registerRisingFeed(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getRisingFeed',
    {
      summary: 'An Atom feed of the subjects of one kind whose RIS rose most at each publication',
      request: { query: QUERIES.getRisingFeed },
      ok: atomAnswer('The feed of the largest rises, newest publication first'),
    },
    (c) => {
      const { kind } = c.req.valid('query');
      checkFeed(c, feedLevel([kind]), deps.edition, deps.publicUrl, `The feed of ${kind}s that rose most`);
      return atomResponse(c, risingFeed(c.get('snapshot'), kind, c.get('viewer')));
    },
  );
}

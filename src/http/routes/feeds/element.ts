import type { OpenAPIHono } from '@hono/zod-openapi';
import { SymbolParam } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { elementFeed } from '../../../core/feeds.js';
import type { AppEnv } from '../../context.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';
import { atomAnswer, atomResponse } from './atom.js';

/** GET /v1/feeds/elements/{symbol}: open, as an element's changes need no more than any key. */
export function registerElementFeed(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getElementFeed',
    {
      summary: "An Atom feed of an element's changes: an entry per publication it moved in",
      request: { params: SymbolParam, query: QUERIES.getElementFeed },
      ok: atomAnswer("The element's feed"),
      errors: { 404: 'Unknown symbol (unknown_symbol)' },
    },
    (c) => atomResponse(c, elementFeed(c.get('snapshot'), c.req.valid('param').symbol, c.get('viewer'))),
  );
}

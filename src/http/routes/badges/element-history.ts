import type { OpenAPIHono } from '@hono/zod-openapi';
import { SymbolParam } from '../../../contracts/params.js';
import { QUERIES } from '../../../contracts/queries.js';
import { elementSparkline } from '../../../core/badges.js';
import type { AppEnv } from '../../context.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';
import { sparklineSvg, svgAnswer, svgResponse } from './svg.js';

/** GET /v1/badges/elements/{symbol}/history.svg: with a feed token of the Personal plan (policy.ts says why). */
export function registerElementHistoryBadge(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getElementHistoryBadge',
    {
      summary: "An SVG sparkline of an element's yearly RIS, to embed in a page",
      request: { params: SymbolParam, query: QUERIES.getElementHistoryBadge },
      ok: svgAnswer("The element's sparkline"),
      errors: { 404: 'Unknown symbol (unknown_symbol)' },
    },
    (c) => {
      const line = elementSparkline(c.get('snapshot'), c.req.valid('param').symbol, c.get('viewer'));
      return svgResponse(c, sparklineSvg(line), line.data_version);
    },
  );
}

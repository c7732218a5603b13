import type { OpenAPIHono } from '@hono/zod-openapi';
import { SymbolSvgParam } from '../../../contracts/badges.js';
import { QUERIES } from '../../../contracts/queries.js';
import { elementBadge } from '../../../core/badges.js';
import type { AppEnv } from '../../context.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';
import { badgeSvg, svgAnswer, svgResponse } from './svg.js';

/** GET /v1/badges/elements/{symbol}.svg: open, as an element's current scores are. */
export function registerElementBadge(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'getElementBadge',
    {
      summary: "An SVG badge of an element's current RIS, to embed in a page (its data version in its title)",
      request: { params: SymbolSvgParam, query: QUERIES.getElementBadge },
      ok: svgAnswer("The element's badge"),
      errors: { 404: 'Unknown symbol (unknown_symbol)' },
    },
    (c) => {
      const badge = elementBadge(c.get('snapshot'), c.req.valid('param').symbol, c.get('viewer'));
      return svgResponse(c, badgeSvg(badge), badge.data_version);
    },
  );
}

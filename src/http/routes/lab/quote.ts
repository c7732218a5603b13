import { type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { LabQuoteFields, LabQuoteSchema } from '../../../contracts/lab.js';
import { QUERIES } from '../../../contracts/queries.js';
import { labQuoteInput } from '../../../core/lab.js';
import type { LabService } from '../../../core/lab-service.js';
import type { AppEnv } from '../../context.js';
import { charge } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import { jsonBody, type RouteDeps } from '../shared.js';

const ok = { description: 'The quote', content: { 'application/json': { schema: LabQuoteSchema } } };
const errors = {
  400: 'A parameter is invalid (invalid_parameter), or the query is unusable (unusable_query: what, where and a suggested fix)',
};

/** GET and POST /lab/quote: a binding quote for a filter query. The quote is kept for runs by quote_id. */
export function registerLabQuote(app: OpenAPIHono<AppEnv>, deps: RouteDeps, lab: LabService): void {
  const answer = async (c: Context<AppEnv>, input: string) => {
    const quote = await lab.quote(c.get('snapshot'), input, c.get('viewer'), {
      pay: () => charge(c),
      keep: c.req.method !== 'HEAD',
    });
    // A quote carries its own expiry: never served from a cache.
    return c.json(quote, 200, { 'cache-control': 'no-store' });
  };

  defineRoute(
    app,
    deps,
    'labQuote',
    {
      summary: 'A binding quote for a filtered paper list: matches, spread, price per deliverable',
      request: { query: QUERIES.labQuote },
      ok,
      errors,
    },
    (c) => answer(c, c.req.valid('query').q),
  );

  defineRoute(
    app,
    deps,
    'labQuotePost',
    {
      summary: 'The same quote, with the filter in a JSON body (query, or markdown with a ```query block)',
      request: jsonBody(z.object(LabQuoteFields).strict()),
      ok,
      errors,
    },
    (c) => {
      return answer(c, labQuoteInput(c.req.valid('json'), ' in the body'));
    },
  );
}

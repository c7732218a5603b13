import { type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { LabQuoteSchema } from '../../../contracts/lab.js';
import { queryFromMarkdown } from '../../../core/lab.js';
import type { LabService } from '../../../core/lab-service.js';
import { MAX_QUERY_LENGTH } from '../../../lab/query-parser.js';
import type { AppEnv } from '../../context.js';
import { charge } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import { jsonBody, type RouteDeps, requireExactlyOne } from '../shared.js';

const QUERY_HELP =
  'The filter: +term or term (required), -term (excluded), (a OR b), "exact topic name", word* (topic names, up to 25), year:A..B, year:A.., year:A';

const ok = { description: 'The quote', content: { 'application/json': { schema: LabQuoteSchema } } };
const errors = {
  400: 'A parameter is invalid (invalid_parameter), or the query is unusable (unusable_query: what, where and a suggested fix)',
};

/** The filter, or a text holding it: the POST body's fields, which MCP's lab_quote takes too (give one). */
export const LabQuoteFields = {
  query: z
    .string()
    .max(MAX_QUERY_LENGTH * 2)
    .optional()
    .describe(QUERY_HELP),
  markdown: z
    .string()
    .max(64 * 1024)
    .optional()
    .describe('A text whose ```query fenced block holds the filter'),
};

/** The filter asked for with LabQuoteFields: the query, or the ```query block of the markdown. */
export function labQuoteInput(
  f: { query?: string | undefined; markdown?: string | undefined },
  where = '',
): string {
  requireExactlyOne({ query: f.query, markdown: f.markdown }, `'query' or 'markdown'${where}`);
  return f.query ?? queryFromMarkdown(f.markdown!);
}

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
      request: {
        query: z
          .object({
            q: z
              .string()
              .max(MAX_QUERY_LENGTH * 2)
              .openapi({ description: QUERY_HELP, example: 'perovskite -Pb year:2020..' }),
          })
          .strict(),
      },
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

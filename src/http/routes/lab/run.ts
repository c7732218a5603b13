import { type OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { LabDepth } from '../../../access/policy.js';
import { LabRunFields, LabRunSchema } from '../../../contracts/lab.js';
import { QUERIES } from '../../../contracts/queries.js';
import { type LabRunRequest, type LabService, labRunRequest } from '../../../core/lab-service.js';
import type { AppEnv } from '../../context.js';
import { charge } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import { jsonBody, type RouteDeps } from '../shared.js';

const ok = { description: 'The papers', content: { 'application/json': { schema: LabRunSchema } } };
const errors = {
  404: 'No quote with that quote_id (unknown_quote)',
  409: 'The data was republished since the quote (quote_stale); ask for a new quote',
  410: 'The quote expired (quote_expired); ask for a new quote',
  400: 'A parameter is invalid (invalid_parameter), the quote was edited (quote_edited), or it does not offer the depth (depth_not_offered)',
  403: "The key's plan is too low (plan_required), or the quote is a licence offer (licence_required)",
};

/**
 * GET and POST /lab/run: the quoted query's top papers, ranked by impact. An edited, expired or
 * stale quote is refused before anything else (and, with pay-per-call, before payment is asked).
 */
export function registerLabRun(app: OpenAPIHono<AppEnv>, deps: RouteDeps, lab: LabService): void {
  const answer = async (c: Context<AppEnv>, request: LabRunRequest, depth: LabDepth) => {
    const paidBefore = (await c.get('payment')?.paidBefore()) ?? false;
    const run = await lab.run(
      c.get('snapshot'),
      request,
      depth,
      c.get('viewer'),
      (usd) => charge(c, usd),
      paidBefore,
    );
    return c.json(run, 200, { 'cache-control': 'no-store' });
  };

  defineRoute(
    app,
    deps,
    'labRun',
    {
      summary: 'The top papers of a quoted query, ranked by impact',
      request: { query: QUERIES.labRun },
      ok,
      errors,
    },
    (c) => {
      const q = c.req.valid('query');
      return answer(c, { quoteId: q.quote_id }, q.depth);
    },
  );

  defineRoute(
    app,
    deps,
    'labRunPost',
    {
      summary:
        'The same run, with {quote_id, depth} or {quote, depth} (the whole quote as returned) in a JSON body',
      request: jsonBody(z.object(LabRunFields).strict()),
      ok,
      errors,
    },
    (c) => {
      const body = c.req.valid('json');
      return answer(c, labRunRequest(body, ' in the body'), body.depth);
    },
  );
}

import type { OpenAPIHono } from '@hono/zod-openapi';
import type { TypedResponse } from 'hono';
import { QUERIES } from '../../../contracts/queries.js';
import { type ResearchAnswer, ResearchSchema } from '../../../contracts/research.js';
import { researchPage, researchRequest } from '../../../core/research.js';
import { inThread } from '../../../core/worker-pool.js';
import type { ResearchJson } from '../../../core/worker-tasks.js';
import type { AppEnv } from '../../context.js';
import { charge } from '../../payment.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

export function registerResearch(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'research',
    {
      summary: 'A question or a paper -> research communities and three reading lists',
      request: { query: QUERIES.research },
      ok: {
        description: 'Communities and reading lists',
        content: { 'application/json': { schema: ResearchSchema } },
      },
      errors: {
        404: 'Nothing matches the question (nothing_matched), the paper is not in the corpus (unknown_paper), or the page is past the last (page_out_of_range, with pages)',
      },
    },
    async (c) => {
      const request = researchRequest(c.req.valid('query'));
      // Research is costly: the payment is asked for (and checked) before the answer is computed,
      // except for a page after the first of a question whose page count is not known yet
      // (researchPage). A question nothing matches is a 404 after it, and is never charged.
      const snapshot = c.get('snapshot');
      // The answer comes as its JSON text (what c.json would write: the same bytes and content type),
      // so no object is copied across threads; typed as the JSON answer it is.
      const { json } = await researchPage(
        snapshot,
        request,
        () => charge(c),
        () =>
          (c.get('services').workerPool ?? inThread).run<ResearchJson>(snapshot, {
            kind: 'researchJson',
            request,
            viewer: c.get('viewer'),
          }),
      );
      return c.body(json, 200, { 'Content-Type': 'application/json' }) as unknown as TypedResponse<
        ResearchAnswer,
        200,
        'json'
      >;
    },
  );
}

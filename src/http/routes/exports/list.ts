import type { OpenAPIHono } from '@hono/zod-openapi';
import { ExportsSchema } from '../../../contracts/exports.js';
import { QUERIES } from '../../../contracts/queries.js';
import { listExports } from '../../../core/exports.js';
import type { AppEnv } from '../../context.js';
import { requestedVersion } from '../../data-version.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

/** GET /v1/exports: each kept data version's whole-table files, with their size and sha256. */
export function registerListExports(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'listExports',
    {
      summary:
        'The whole-table files of each kept data version: elements and subjects, scores and yearly history, Parquet and gzip CSV',
      request: { query: QUERIES.listExports },
      ok: {
        description: 'The kept versions, most recently published first, each with its files',
        content: { 'application/json': { schema: ExportsSchema } },
      },
    },
    (c) => {
      const pinned = requestedVersion(c) !== null;
      const { snapshotDir } = c.get('services');
      const answer = listExports(c.get('snapshot'), snapshotDir, c.get('viewer'), pinned);
      // Versions are published and pruned, and their files written, while a snapshot is served.
      return c.json(answer, 200, { 'cache-control': 'no-store' });
    },
  );
}

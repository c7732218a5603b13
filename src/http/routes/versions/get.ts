import type { OpenAPIHono } from '@hono/zod-openapi';
import { QUERIES } from '../../../contracts/queries.js';
import { VersionsSchema } from '../../../contracts/versions.js';
import { listVersions } from '../../../core/versions.js';
import type { AppEnv } from '../../context.js';
import { defineRoute } from '../define-route.js';
import type { RouteDeps } from '../shared.js';

/** GET /v1/versions: the published snapshots still kept, each answerable with data_version=. */
export function registerVersions(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  defineRoute(
    app,
    deps,
    'listVersions',
    {
      summary: 'The data versions kept: pin any read to one with data_version= or RI-Data-Version',
      request: { query: QUERIES.listVersions },
      ok: {
        description: 'The kept versions, most recently published first',
        content: { 'application/json': { schema: VersionsSchema } },
      },
    },
    (c) => {
      const answer = listVersions(c.get('snapshot'), c.get('services').snapshotDir, c.get('viewer'));
      // The list changes when a snapshot is published or pruned, not only when the served one does.
      return c.json(answer, 200, { 'cache-control': 'no-store' });
    },
  );
}

import { type OpenAPIHono, z } from '@hono/zod-openapi';
import { VersionsSchema } from '../../../contracts/versions.js';
import { envelope } from '../../../core/viewer.js';
import type { Publication } from '../../../snapshot/publication-log.js';
import { keptVersions } from '../../../snapshot/versions.js';
import type { AppEnv } from '../../context.js';
import { DATA_VERSION_HEADER } from '../../data-version.js';
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
      request: { query: z.object({}).strict() },
      ok: {
        description: 'The kept versions, most recently published first',
        content: { 'application/json': { schema: VersionsSchema } },
      },
    },
    (c) => {
      const snapshot = c.get('snapshot');
      const versions: (Omit<Publication, 'published_at'> & { published_at: string | null })[] = keptVersions(
        c.get('services').snapshotDir,
      );
      // The served version is listed even when its file has just been pruned or moved aside.
      if (!versions.some((v) => v.data_version === snapshot.version))
        versions.unshift({
          data_version: snapshot.version,
          published_at: null,
          cutoff_date: snapshot.meta.cutoff_date ?? null,
          works: snapshot.meta.corpus_papers === undefined ? null : Number(snapshot.meta.corpus_papers),
        });
      const answer = {
        current_version: snapshot.version,
        versions: versions.map((v) => ({ ...v, current: v.data_version === snapshot.version })),
        ...envelope(snapshot, c.get('viewer'), '/docs', {
          cite:
            `Every answer names the snapshot it came from in data_version. Asked again with data_version=V ` +
            `(or the ${DATA_VERSION_HEADER} header), a read answers from V, the same bytes as when V was current, ` +
            'while V is listed here. The service keeps the last few published versions (SNAPSHOTS_KEEP, 5 unless ' +
            'the operator sets another count); a version no longer kept answers 410 data_version_gone.',
        }),
      };
      // The list changes when a snapshot is published or pruned, not only when the served one does.
      return c.json(answer, 200, { 'cache-control': 'no-store' });
    },
  );
}

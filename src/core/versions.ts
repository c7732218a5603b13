import type { VersionsAnswer } from '../contracts/versions.js';
import type { Publication } from '../snapshot/publication-log.js';
import type { SnapshotStamp } from '../snapshot/reader.js';
import { keptVersions } from '../snapshot/versions.js';
import { envelope, type Viewer } from './viewer.js';

/** What every reader of the list is told about pinning a read to a version. */
export const VERSIONS_CITE_NOTES =
  'Every answer names the snapshot it came from in data_version. Asked again with data_version=V ' +
  '(or the RI-Data-Version header), a read answers from V, the same bytes as when V was current, ' +
  'while V is listed here. The service keeps the last few published versions (SNAPSHOTS_KEEP, 5 unless ' +
  'the operator sets another count); a version no longer kept answers 410 data_version_gone.';

/** The published snapshots still kept in `snapshotDir`, newest first, the served one marked current. */
export function listVersions(snapshot: SnapshotStamp, snapshotDir: string, viewer: Viewer): VersionsAnswer {
  const versions: (Omit<Publication, 'published_at'> & { published_at: string | null })[] =
    keptVersions(snapshotDir);
  // The served version is listed even when its file has just been pruned or moved aside.
  if (!versions.some((v) => v.data_version === snapshot.version))
    versions.unshift({
      data_version: snapshot.version,
      published_at: null,
      cutoff_date: snapshot.meta.cutoff_date ?? null,
      works: snapshot.meta.corpus_papers === undefined ? null : Number(snapshot.meta.corpus_papers),
    });
  return {
    current_version: snapshot.version,
    versions: versions.map((v) => ({ ...v, current: v.data_version === snapshot.version })),
    ...envelope(snapshot, viewer, '/docs', { cite: VERSIONS_CITE_NOTES }),
  };
}

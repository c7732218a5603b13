import type { DataVersion } from '../contracts/data-version.js';
import { ServiceError } from '../core/errors.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';

/**
 * The snapshot of a pinned read, acquired: the current one or a kept older one. A version no
 * longer kept (or never published): 410 data_version_gone, naming the current one. The version
 * the CURRENT pointer names but that cannot be read (its file damaged and set aside until
 * `ri build` rewrites it) is not gone: 503 data_unavailable with Retry-After, as an unpinned read
 * gets while no snapshot can be read (a paid retry pinned to it gets its answer after the repair).
 */
export async function pinnedSnapshot(
  snapshots: SnapshotManager,
  version: DataVersion,
  publicUrl: string,
): Promise<Snapshot> {
  const snapshot = await snapshots.acquireVersion(version);
  if (snapshot) return snapshot;
  if (snapshots.health().current === version)
    throw new ServiceError(
      'data_unavailable',
      `Data version ${version} is being checked or replaced; try again shortly.`,
      { data_version: version },
      { 'retry-after': '1' },
    );
  const current = snapshots.version;
  throw new ServiceError(
    'data_version_gone',
    `Data version ${version} is not kept (the service keeps the last few published; ${publicUrl}/v1/versions lists them)` +
      `${current ? `; the current one is ${current}` : ''}.`,
    { data_version: version, current_version: current, versions_url: `${publicUrl}/v1/versions` },
  );
}

import { fileStamp, listSnapshotVersions, snapshotFile } from './folder.js';
import { describeSnapshotFile, type Publication, readPublications } from './publication-log.js';

/** Descriptions of files the log does not name, by path and stamp: each file is read once. */
const unlogged = new Map<string, Publication>();

/**
 * The published snapshots kept on disk, most recently published first: what /v1/versions lists
 * and what data_version= can pin. Files published before the log existed come after the logged
 * ones, newest file first, with the file's time as published_at.
 */
export function keptVersions(dir: string): Publication[] {
  const files = listSnapshotVersions(dir);
  const onDisk = new Set(files);
  const logged = readPublications(dir).filter((p) => onDisk.has(p.data_version));
  const named = new Set(logged.map((p) => p.data_version));
  const others: Publication[] = [];
  for (const version of files) {
    if (named.has(version)) continue;
    const path = snapshotFile(dir, version);
    const stamp = fileStamp(path);
    if (!stamp) continue;
    const key = `${path}:${stamp.key}`;
    let entry = unlogged.get(key);
    if (!entry) {
      entry = describeSnapshotFile(path, version, new Date(stamp.mtimeMs).toISOString());
      if (unlogged.size > 256) unlogged.clear();
      unlogged.set(key, entry);
    }
    others.push(entry);
  }
  return [...logged, ...others];
}

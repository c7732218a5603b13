import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileHash } from './file-hash.js';
import { fileStamp, snapshotFile } from './folder.js';
import { checksummedFile, pageChecksums } from './page-checksums.js';

/**
 * A snapshot is served only while its bytes are the ones published under its name (its
 * data_version, their hash); one found otherwise is moved out of the published set into
 * `quarantine/`. A file with page checksums is served before its hash is known, every page
 * checked as it is read (page-checksums.ts), and hashed behind; one without is hashed first. The
 * server checks (SnapshotManager), and so does the build before it keeps a file already published
 * under the same version, or copies rows from the previous one.
 */

/**
 * True when the snapshot of `version` can be served before it is hashed: the page checksum
 * extension is loaded and the file's header says it has them and is whole (its size).
 */
export function servableAtOnce(dir: string, version: string): boolean {
  return pageChecksums().loaded && checksummedFile(snapshotFile(dir, version));
}

/**
 * What a server may start on: a snapshot servable at once, or one whose bytes hash to its name.
 * (Damage within the pages of the first is found as they are read, or by the hash behind.)
 */
export async function startsSound(dir: string, version: string): Promise<boolean> {
  return servableAtOnce(dir, version) || verifySnapshot(dir, version);
}

/**
 * Content hashes computed or being computed, by path and stamp: a file is hashed again only when
 * it changes, and a check asked while the same one runs waits for it.
 */
const hashed = new Map<string, Promise<string>>();

/**
 * True when the snapshot file of `version` is there and its bytes still hash to its name. Flipped
 * bytes or zeroed pages change the hash, so a damaged file is never opened or kept as published.
 * `again`: hashed anew even if its stamp is unchanged (SQLite found it damaged: bytes can change
 * under the same size, mtime and inode).
 */
export async function verifySnapshot(dir: string, version: string, again = false): Promise<boolean> {
  const path = snapshotFile(dir, version);
  const stamp = fileStamp(path);
  if (!stamp) return false;
  const key = `${path}:${stamp.key}`;
  if (again) hashed.delete(key);
  let hash = hashed.get(key);
  if (hash === undefined) {
    if (hashed.size > 256) hashed.clear();
    hash = fileHash(path);
    hashed.set(key, hash);
  }
  try {
    return (await hash) === version;
  } catch {
    hashed.delete(key);
    return false;
  }
}

/** Quarantined files kept for a post-mortem; older ones are removed. */
const QUARANTINE_KEEP = 3;

/**
 * Moves a damaged snapshot file out of the published set (into `quarantine/`), so neither this
 * process nor a restart opens it again and `ri build` can write a good copy under its name.
 * Returns where it went, or null when it could not be moved (a read-only folder).
 */
export function quarantineSnapshot(dir: string, version: string): string | null {
  const qdir = join(dir, 'quarantine');
  const to = join(qdir, `${version}-${Date.now()}.sqlite`);
  try {
    mkdirSync(qdir, { recursive: true });
    renameSync(snapshotFile(dir, version), to);
  } catch {
    return null;
  }
  const kept = readdirSync(qdir).sort();
  for (const old of kept.slice(0, Math.max(0, kept.length - QUARANTINE_KEEP)))
    rmSync(join(qdir, old), { force: true });
  return to;
}

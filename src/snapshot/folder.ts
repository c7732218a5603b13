import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDataVersion, SNAPSHOT_FILE } from '../contracts/data-version.js';

/**
 * Published snapshots live in one folder: `<data_version>.sqlite` files, a CURRENT file naming
 * the one being served, a PREVIOUS file naming the one before it (for rollback) and the
 * publication log (publication-log.ts). This is how a reader finds them; the build writes them
 * (src/snapshot-build/publish.ts), each change a write to a temporary file, fsync, then rename,
 * so a reader sees the old state or the new one, never half of either.
 */
export function snapshotFile(dir: string, version: string): string {
  return join(dir, `${version}.sqlite`);
}

/** The version a pointer names, whether or not its file is there. */
export function readPointerName(dir: string, name: 'CURRENT' | 'PREVIOUS'): string | null {
  try {
    const v = readFileSync(join(dir, name), 'utf8').trim();
    return isDataVersion(v) ? v : null;
  } catch {
    return null;
  }
}

/** The version a pointer names, when its file is there. */
export function readPointer(dir: string, name: 'CURRENT' | 'PREVIOUS'): string | null {
  const v = readPointerName(dir, name);
  return v && existsSync(snapshotFile(dir, v)) ? v : null;
}

/** Every published snapshot file in the folder, newest first. */
export function listSnapshotVersions(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((name) => SNAPSHOT_FILE.exec(name)?.[1])
    .filter((v): v is string => v !== undefined)
    .map((v) => ({ v, mtime: fileStamp(snapshotFile(dir, v))?.mtimeMs ?? 0 }))
    .sort((a, b) => b.mtime - a.mtime)
    .map((x) => x.v);
}

/** Size, mtime and inode of a file: when they are unchanged, so (for our purposes) are its bytes. */
export function fileStamp(path: string): { key: string; mtimeMs: number } | null {
  try {
    const st = statSync(path);
    return { key: `${st.size}:${st.mtimeMs}:${st.ino}`, mtimeMs: st.mtimeMs };
  } catch {
    return null;
  }
}

import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_SNAPSHOTS_KEEP } from '../config/config.js';
import { fsyncPath, writeFileAtomically } from './atomic-file.js';
import { fileHash } from './file-hash.js';
import {
  describeSnapshotFile,
  readPublications,
  versionsToKeep,
  writePublications,
} from './publication-log.js';

/**
 * Published snapshots live in one folder: `<data_version>.sqlite` files, a CURRENT file naming
 * the one being served, a PREVIOUS file naming the one before it (for rollback) and the
 * publication log (publication-log.ts). The last SNAPSHOTS_KEEP published files are kept, so an
 * answer can be asked again of the version it came from. Every change is a write to a temporary
 * file, fsync, then rename, so a reader sees the old state or the new one, never half of either.
 */
const VERSION = /^[0-9a-f]{16}$/;

export function snapshotFile(dir: string, version: string): string {
  return join(dir, `${version}.sqlite`);
}

/** The version a pointer names, whether or not its file is there. */
export function readPointerName(dir: string, name: 'CURRENT' | 'PREVIOUS'): string | null {
  try {
    const v = readFileSync(join(dir, name), 'utf8').trim();
    return VERSION.test(v) ? v : null;
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
    .map((name) => /^([0-9a-f]{16})\.sqlite$/.exec(name)?.[1])
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

/**
 * Content hashes computed or being computed, by path and stamp: a file is hashed again only when
 * it changes, and a check asked while the same one runs waits for it.
 */
const hashed = new Map<string, Promise<string>>();

/**
 * True when the snapshot file of `version` is there and its bytes still hash to its name. Flipped
 * bytes or zeroed pages change the hash, so a damaged file is never opened or kept as published.
 */
export async function verifySnapshot(dir: string, version: string): Promise<boolean> {
  const path = snapshotFile(dir, version);
  const stamp = fileStamp(path);
  if (!stamp) return false;
  const key = `${path}:${stamp.key}`;
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

function writePointer(dir: string, name: 'CURRENT' | 'PREVIOUS', version: string): void {
  writeFileAtomically(dir, name, `${version}\n`);
}

export interface PublishResult {
  version: string;
  /** False when this content was already the current snapshot. */
  changed: boolean;
  /** True when a published file of this version was missing or damaged and is now rewritten. */
  repaired: boolean;
  previous: string | null;
}

/**
 * Publishes a finished snapshot file (moved into place), records it in the publication log and
 * keeps the last `keep` published (at least the current and the one before it). A file already
 * published under the same version is kept only if it still verifies: a damaged one (or one that
 * was quarantined) is replaced by the fresh build.
 */
export async function publishSnapshot(
  dir: string,
  builtFile: string,
  options: { keep?: number } = {},
): Promise<PublishResult> {
  const keep = options.keep ?? DEFAULT_SNAPSHOTS_KEEP;
  // The file is flushed to disk (I/O threads) while it is hashed.
  const flushed = fsyncFile(builtFile);
  flushed.catch(() => {}); // awaited below; a failed hash must not leave it unhandled
  const version = await fileHash(builtFile);
  await flushed;
  const target = snapshotFile(dir, version);
  const existed = existsSync(target);
  const pointed = readPointerName(dir, 'CURRENT') === version || readPointerName(dir, 'PREVIOUS') === version;
  let repaired = false;
  if (existed && (await verifySnapshot(dir, version))) rmSync(builtFile);
  else {
    repaired = existed || pointed;
    renameSync(builtFile, target);
    fsyncPath(dir);
  }
  const current = readPointer(dir, 'CURRENT');
  if (current === version) {
    prune(dir, keep);
    return { version, changed: false, repaired, previous: readPointer(dir, 'PREVIOUS') };
  }
  if (current) writePointer(dir, 'PREVIOUS', current);
  writePointer(dir, 'CURRENT', version);
  // Logged before pruning, so the new version counts first among those kept.
  const entry = describeSnapshotFile(target, version, new Date().toISOString());
  writePublications(dir, [entry, ...readPublications(dir).filter((p) => p.data_version !== version)]);
  prune(dir, keep);
  return { version, changed: true, repaired, previous: current };
}

async function fsyncFile(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Serves the previous snapshot again (and keeps the current one as the new previous). */
export function rollback(dir: string): { version: string; previous: string } | null {
  const current = readPointer(dir, 'CURRENT');
  const previous = readPointer(dir, 'PREVIOUS');
  if (!current || !previous) return null;
  writePointer(dir, 'PREVIOUS', current);
  writePointer(dir, 'CURRENT', previous);
  return { version: previous, previous: current };
}

/**
 * Removes snapshot files beyond the last `keep` published, never CURRENT or PREVIOUS (an open
 * file stays readable on POSIX), trims the publication log to the files kept, and removes the
 * half-written files of builds that were killed (their process is gone).
 */
function prune(dir: string, keep: number): void {
  const log = readPublications(dir);
  const kept = versionsToKeep(
    log.map((p) => p.data_version),
    listSnapshotVersions(dir),
    [readPointer(dir, 'CURRENT'), readPointer(dir, 'PREVIOUS')],
    keep,
  );
  const keptLog = log.filter((p) => kept.has(p.data_version));
  if (keptLog.length !== log.length) writePublications(dir, keptLog);
  for (const name of readdirSync(dir)) {
    const m = /^([0-9a-f]{16})\.sqlite$/.exec(name);
    if (m && !kept.has(m[1]!)) rmSync(join(dir, name), { force: true });
    // The snapshot being written and its side files (titles' index, topic model), each with SQLite's journal.
    const b = /^\.build-(\d+)-\d+\.sqlite(-titles(-topics)?)?(-journal|-wal|-shm)?$/.exec(name);
    if (b && !processAlive(Number(b[1]))) rmSync(join(dir, name), { force: true });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

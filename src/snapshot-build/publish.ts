import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_SNAPSHOTS_KEEP } from '../config/config.js';
import { isDataVersion, SNAPSHOT_FILE } from '../contracts/data-version.js';
import { EXPORTS_WRITING, exportsRoot } from '../snapshot/exports.js';
import { fileHash } from '../snapshot/file-hash.js';
import { listSnapshotVersions, readPointer, readPointerName, snapshotFile } from '../snapshot/folder.js';
import { verifySnapshot } from '../snapshot/integrity.js';
import {
  describeSnapshotFile,
  readPublications,
  versionsToKeep,
  writePublications,
} from '../snapshot/publication-log.js';
import { fsyncPath, writeFileAtomically } from '../util/atomic-file.js';

/**
 * Publishes into the snapshots folder (folder.ts: the files, CURRENT, PREVIOUS, the publication
 * log). The last SNAPSHOTS_KEEP published files are kept, so an answer can be asked again of the
 * version it came from. Every change is a write to a temporary file, fsync, then rename, so a
 * reader sees the old state or the new one, never half of either.
 */
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
  options: {
    keep?: number;
    /**
     * Called once the file is in place, before CURRENT names it: what is written beside a
     * published version (its exports: src/exports/) is there when servers switch to it. It
     * reports its own failures (the snapshot is published whatever it does).
     */
    placed?: (version: string) => Promise<void>;
  } = {},
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
  await options.placed?.(version);
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

/**
 * Publishes the previous snapshot again: the one that was current before the current one (the
 * PREVIOUS pointer; when PREVIOUS is missing or names the current version, the newest other
 * version of the publication log whose file is there). Like any publish, it becomes current and
 * heads the publication log with a new published_at, and the version rolled back from becomes
 * the previous one: a second rollback returns to it.
 *
 * Three files change, each atomically, in this order: the log, PREVIOUS, CURRENT (what is served
 * changes last). A rollback that stops half way is finished by running it again: after the log
 * alone, PREVIOUS still names the target; after PREVIOUS too (it then names the current version),
 * the log's head does.
 */
export function rollback(dir: string): { version: string; previous: string } | null {
  const current = readPointer(dir, 'CURRENT');
  if (!current) return null;
  const log = readPublications(dir);
  const pointed = readPointer(dir, 'PREVIOUS');
  const logged = log.find((p) => p.data_version !== current && existsSync(snapshotFile(dir, p.data_version)));
  const target = pointed && pointed !== current ? pointed : logged?.data_version;
  if (!target) return null;
  const entry = describeSnapshotFile(snapshotFile(dir, target), target, new Date().toISOString());
  writePublications(dir, [entry, ...log.filter((p) => p.data_version !== target)]);
  writePointer(dir, 'PREVIOUS', current);
  writePointer(dir, 'CURRENT', target);
  return { version: target, previous: current };
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
    const m = SNAPSHOT_FILE.exec(name);
    if (m && !kept.has(m[1]!)) rmSync(join(dir, name), { force: true });
    // The snapshot being written and its side files (titles' index, topic model, staged
    // references), each with SQLite's journal.
    const b = /^\.build-(\d+)-\d+\.sqlite(-titles(-topics)?|-refs)?(-journal|-wal|-shm)?$/.exec(name);
    if (b && !processAlive(Number(b[1]))) rmSync(join(dir, name), { force: true });
  }
  pruneExports(dir, kept);
}

/** The exports of versions no longer kept, and the half-written ones of processes that are gone. */
function pruneExports(dir: string, kept: Set<string>): void {
  const root = exportsRoot(dir);
  if (!existsSync(root)) return;
  for (const name of readdirSync(root)) {
    const writing = EXPORTS_WRITING.exec(name);
    const stale = writing ? !processAlive(Number(writing[1])) : isDataVersion(name) && !kept.has(name);
    if (stale) rmSync(join(root, name), { recursive: true, force: true });
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

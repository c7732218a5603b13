import { createHash } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/**
 * Published snapshots live in one folder: `<data_version>.sqlite` files, a CURRENT file naming
 * the one being served and a PREVIOUS file naming the one before it (kept for rollback). Every
 * change is a write to a temporary file, fsync, then rename, so a reader sees the old state or
 * the new one, never half of either.
 */
const VERSION = /^[0-9a-f]{16}$/;

export function snapshotFile(dir: string, version: string): string {
  return join(dir, `${version}.sqlite`);
}

export function readPointer(dir: string, name: 'CURRENT' | 'PREVIOUS'): string | null {
  try {
    const v = readFileSync(join(dir, name), 'utf8').trim();
    return VERSION.test(v) && existsSync(snapshotFile(dir, v)) ? v : null;
  } catch {
    return null;
  }
}

/** The data_version of a snapshot file: a content hash of its bytes. */
export async function contentHash(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 22 })) hash.update(chunk as Buffer);
  return hash.digest('hex').slice(0, 16);
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function writePointer(dir: string, name: 'CURRENT' | 'PREVIOUS', version: string): void {
  const tmp = join(dir, `.${name}.tmp`);
  writeFileSync(tmp, `${version}\n`);
  fsyncPath(tmp);
  renameSync(tmp, join(dir, name));
  fsyncPath(dir);
}

export interface PublishResult {
  version: string;
  /** False when this content was already the current snapshot. */
  changed: boolean;
  previous: string | null;
}

/** Publishes a finished snapshot file (moved into place) and keeps the one before it. */
export async function publishSnapshot(dir: string, builtFile: string): Promise<PublishResult> {
  const version = await contentHash(builtFile);
  const target = snapshotFile(dir, version);
  if (existsSync(target)) rmSync(builtFile);
  else {
    fsyncPath(builtFile);
    renameSync(builtFile, target);
  }
  const current = readPointer(dir, 'CURRENT');
  if (current === version) return { version, changed: false, previous: readPointer(dir, 'PREVIOUS') };
  if (current) writePointer(dir, 'PREVIOUS', current);
  writePointer(dir, 'CURRENT', version);
  prune(dir);
  return { version, changed: true, previous: current };
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

/** Removes snapshot files other than CURRENT and PREVIOUS (an open file stays readable on POSIX). */
function prune(dir: string): void {
  const keep = new Set([readPointer(dir, 'CURRENT'), readPointer(dir, 'PREVIOUS')]);
  for (const name of readdirSync(dir)) {
    const m = /^([0-9a-f]{16})\.sqlite$/.exec(name);
    if (m && !keep.has(m[1]!)) rmSync(join(dir, name), { force: true });
  }
}

import { closeSync, fsyncSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Flushes a file (or a folder's entries) to disk. */
export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces `dir/name` with `text`: a temporary file, fsync, rename, fsync of the folder, so a
 * reader (or a crash) sees the old content or the new one, never half of either.
 */
export function writeFileAtomically(dir: string, name: string, text: string): void {
  const tmp = join(dir, `.${name}.tmp`);
  writeFileSync(tmp, text);
  fsyncPath(tmp);
  renameSync(tmp, join(dir, name));
  fsyncPath(dir);
}

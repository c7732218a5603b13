import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { tempDir } from './works.js';

/**
 * A real disk that can be filled: a 2 MB tmpfs (needs root). `mounted` is false where it cannot be
 * made (not root, no tmpfs): the tests that need it are skipped there.
 */
export function smallDisk(prefix: string): { dir: string; mounted: boolean; remove(): void } {
  const dir = tempDir(prefix);
  let mounted = false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir], { stdio: 'ignore' });
    mounted = true;
  } catch {
    // not root, or no tmpfs
  }
  return {
    dir,
    mounted,
    remove() {
      if (mounted) execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Fills the disk under an SQLite file so it cannot be written: its WAL emptied first (as a
 * checkpoint does), so the next write has to grow it, then every free block taken (large chunks,
 * then page-sized ones for the last). The database stays open (its WAL and shared memory kept)
 * until the returned close().
 */
export function fillDiskUnder(sqliteFile: string): { close(): void } {
  const holder = new Database(sqliteFile);
  holder.pragma('wal_checkpoint(TRUNCATE)');
  const filler = openSync(join(sqliteFile, '..', 'filler'), 'w');
  try {
    for (const size of [64 * 1024, 4096]) {
      const chunk = Buffer.alloc(size);
      try {
        for (;;) writeSync(filler, chunk);
      } catch (error) {
        expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
      }
    }
  } finally {
    closeSync(filler);
  }
  return { close: () => holder.close() };
}

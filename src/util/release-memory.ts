import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { nativeLibrary } from './native-library.js';

/**
 * Gives back to the system the memory the C allocator keeps (native/release-memory.c, a SQLite
 * extension built with the project: glibc's malloc_trim). A build calls it where a large part of
 * its memory has just been freed (the scoring worker gone, DuckDB's staging done): glibc keeps a
 * thread's freed arena for that thread's next allocations, so without it the process stays as
 * large as at the scoring's peak through every phase after it.
 */

const RELEASE_MEMORY_LIBRARY = nativeLibrary('release-memory');

let statement: Database.Statement | null | undefined;

/**
 * Returns the allocator's free memory to the system; true when some was returned. False, and
 * nothing done, where the extension is not built or the C library has no such call (not glibc).
 */
export function releaseFreeMemory(): boolean {
  if (statement === undefined) {
    statement = null;
    if (existsSync(RELEASE_MEMORY_LIBRARY)) {
      const db = new Database(':memory:');
      db.loadExtension(RELEASE_MEMORY_LIBRARY);
      statement = db.prepare('SELECT release_memory()').pluck();
    }
  }
  return statement?.get() === 1;
}

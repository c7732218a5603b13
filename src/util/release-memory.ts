import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

/**
 * Gives back to the system the memory the C allocator keeps (native/release-memory.c, a SQLite
 * extension built with the project: glibc's malloc_trim). A build calls it where a large part of
 * its memory has just been freed (the scoring worker gone, DuckDB's staging done): glibc keeps a
 * thread's freed arena for that thread's next allocations, so without it the process stays as
 * large as at the scoring's peak through every phase after it.
 */

const SUFFIX: string = { darwin: 'dylib', win32: 'dll' }[process.platform as string] ?? 'so';
/** The extension, built by scripts/build-native.mjs (`npm run build`): dist/native/, from src/ or dist/ alike. */
const RELEASE_MEMORY_LIBRARY = fileURLToPath(
  new URL(`../../dist/native/release-memory.${SUFFIX}`, import.meta.url),
);

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

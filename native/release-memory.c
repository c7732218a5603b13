/*
 * Gives the memory the C allocator keeps back to the system: a SQLite extension (loaded into
 * better-sqlite3's SQLite, like page-checksums.c, because that is the native code the project
 * already builds and loads) with one function, release_memory(), that calls glibc's malloc_trim(0).
 *
 * Why: glibc keeps the memory freed in a thread's arena for that arena's next allocations and
 * returns only the top of the main heap on its own. A build's scoring worker (a thread) frees a
 * gigabyte at 10M works when it ends; without a trim the process keeps it resident through the
 * phases that follow. malloc_trim(0) walks every arena and returns their free pages.
 * Elsewhere (macOS, musl) it does nothing and answers 0.
 *
 *   SELECT release_memory()  -- 1 when memory was returned, else 0
 */
#include <stdlib.h> /* first: defines __GLIBC__ where the C library is glibc */

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__GNUC__)
#define RM_EXPORT __attribute__((visibility("default")))
#else
#define RM_EXPORT
#endif

static void releaseMemory(sqlite3_context *context, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
#if defined(__GLIBC__)
  sqlite3_result_int(context, malloc_trim(0));
#else
  sqlite3_result_int(context, 0);
#endif
}

RM_EXPORT int sqlite3_releasememory_init(sqlite3 *db, char **error, const sqlite3_api_routines *api) {
  SQLITE_EXTENSION_INIT2(api);
  (void)error;
  return sqlite3_create_function(db, "release_memory", 0, SQLITE_UTF8 | SQLITE_DIRECTONLY, 0, releaseMemory,
                                 0, 0);
}

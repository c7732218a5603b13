/*
 * Page checksums for snapshot files: a VFS shim over the default VFS, loaded into better-sqlite3's
 * SQLite as an extension (src/snapshot/page-checksums.ts; built by scripts/build-native.mjs).
 *
 * A database whose header reserves exactly 8 bytes at the end of every page (header byte 20) keeps
 * in them a checksum of the rest of the page and of its page number: written with every page, and
 * checked on every page read from the file, so every query checks the pages it reads; a page that
 * does not match fails the read with SQLITE_IOERR_DATA. The page number counts so that a page
 * written at another's place fails too. Any other file passes through unchanged (the state store,
 * temporary files, journals, the build's side files).
 *
 * The design is SQLite's own checksum VFS (ext/misc/cksumvfs.c), written here because no package
 * ships it. better-sqlite3 opens every file through the default VFS (no URI, no VFS name), so this
 * one is registered as the default, once per process; every thread shares it.
 *
 * What a connection gets, once the extension is loaded in the process:
 *   SELECT enable_page_checksums('main')  -- on a new, empty database: reserve the 8 bytes
 *   PRAGMA page_checksums                 -- '1' when the file's pages are checked, else '0'
 */
#include <stdint.h>
#include <string.h>

#include "sqlite3ext.h"
SQLITE_EXTENSION_INIT1

#define PC_VFS_NAME "ri-page-checksums"
#define PC_RESERVE 8

#if defined(__GNUC__)
#define PC_EXPORT __attribute__((visibility("default")))
#else
#define PC_EXPORT
#endif

typedef struct PcFile {
  sqlite3_file base;
  const char *name;
  /* Once the header reserves 8 bytes: every page is checksummed (reserve bytes never shrink). */
  int on;
  /* The page size the header names, once seen (0: not yet). */
  int page_size;
} PcFile;

/* The file of the VFS below, right after ours in the same allocation. */
#define BELOW(f) ((sqlite3_file *)(((PcFile *)(f)) + 1))
#define BELOW_VFS(v) ((sqlite3_vfs *)((v)->pAppData))

static uint32_t le32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  return v;
}

static void put_le32(unsigned char *p, uint32_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap32(v);
#endif
  memcpy(p, &v, 4);
}

/*
 * Two running 32-bit sums over the page's little-endian words, each taking the other in (so the
 * order of the words counts, as in Fletcher's checksum), started from the page number: the same
 * bytes on any machine give the same checksum, so the same corpus gives the same file.
 */
static void page_sum(const unsigned char *page, int bytes, sqlite3_int64 pgno, unsigned char out[8]) {
  uint32_t s1 = 0x9e3779b9u ^ (uint32_t)pgno;
  uint32_t s2 = 0x85ebca6bu ^ (uint32_t)((uint64_t)pgno >> 32);
  for (int i = 0; i < bytes; i += 8) {
    s1 += le32(page + i) + s2;
    s2 += le32(page + i + 4) + s1;
  }
  put_le32(out, s1);
  put_le32(out + 4, s2);
}

/* Whether a read or write of `n` bytes at `off` is one whole page. */
static int whole_page(const PcFile *p, int n, sqlite3_int64 off) {
  if (p->page_size) return n == p->page_size && off % n == 0;
  return n >= 512 && n <= 65536 && (n & (n - 1)) == 0 && off % n == 0;
}

/* The database header (the first 100 bytes): whether it reserves 8 bytes a page, and the page size. */
static void note_header(PcFile *p, const unsigned char *h) {
  if (memcmp(h, "SQLite format 3", 16) != 0 || h[20] != PC_RESERVE) return;
  int size = (h[16] << 8) | h[17];
  p->page_size = size == 1 ? 65536 : size;
  p->on = 1;
}

static int pcRead(sqlite3_file *f, void *buf, int n, sqlite3_int64 off) {
  PcFile *p = (PcFile *)f;
  sqlite3_file *below = BELOW(f);
  int rc = below->pMethods->xRead(below, buf, n, off);
  if (rc != SQLITE_OK && rc != SQLITE_IOERR_SHORT_READ) return rc;
  /* Only until the header is seen: damage to a header read later must not turn the check off. */
  if (!p->on && rc == SQLITE_OK && off == 0 && n >= 100) note_header(p, buf);
  if (!p->on || !whole_page(p, n, off)) return rc;
  unsigned char sum[8];
  const unsigned char *page = buf;
  /* A page past the end of a checksummed file is a truncated file: SQLite would read zeros. */
  if (rc == SQLITE_OK) page_sum(page, n - PC_RESERVE, off / n + 1, sum);
  if (rc != SQLITE_OK || memcmp(page + n - PC_RESERVE, sum, PC_RESERVE) != 0) {
    sqlite3_log(SQLITE_IOERR_DATA, "page checksum mismatch: page %lld of \"%s\"", off / n + 1, p->name);
    return SQLITE_IOERR_DATA;
  }
  return SQLITE_OK;
}

static int pcWrite(sqlite3_file *f, const void *buf, int n, sqlite3_int64 off) {
  PcFile *p = (PcFile *)f;
  sqlite3_file *below = BELOW(f);
  if (!p->on && off == 0 && n >= 100) note_header(p, buf);
  /* The pager's own page buffer: the reserved bytes are no one else's, so the sum goes in place. */
  if (p->on && whole_page(p, n, off)) {
    unsigned char *page = (unsigned char *)buf;
    page_sum(page, n - PC_RESERVE, off / n + 1, page + n - PC_RESERVE);
  }
  return below->pMethods->xWrite(below, buf, n, off);
}

static int pcClose(sqlite3_file *f) {
  sqlite3_file *below = BELOW(f);
  return below->pMethods->xClose(below);
}

static int pcTruncate(sqlite3_file *f, sqlite3_int64 size) {
  sqlite3_file *below = BELOW(f);
  return below->pMethods->xTruncate(below, size);
}

static int pcSync(sqlite3_file *f, int flags) {
  sqlite3_file *below = BELOW(f);
  return below->pMethods->xSync(below, flags);
}

static int pcFileSize(sqlite3_file *f, sqlite3_int64 *size) {
  sqlite3_file *below = BELOW(f);
  return below->pMethods->xFileSize(below, size);
}

static int pcLock(sqlite3_file *f, int lock) {
  sqlite3_file *below = BELOW(f);
  return below->pMethods->xLock(below, lock);
}

static int pcUnlock(sqlite3_file *f, int lock) {
  sqlite3_file *below = BELOW(f);
  return below->pMethods->xUnlock(below, lock);
}

static int pcCheckReservedLock(sqlite3_file *f, int *out) {
  sqlite3_file *below = BELOW(f);
  return below->pMethods->xCheckReservedLock(below, out);
}

static int pcFileControl(sqlite3_file *f, int op, void *arg) {
  PcFile *p = (PcFile *)f;
  sqlite3_file *below = BELOW(f);
  if (op == SQLITE_FCNTL_PRAGMA) {
    char **pragma = (char **)arg;
    if (sqlite3_stricmp(pragma[1], "page_checksums") == 0) {
      if (pragma[2] != 0) {
        pragma[0] = sqlite3_mprintf("page_checksums is read-only: use enable_page_checksums() on a new database");
        return SQLITE_ERROR;
      }
      /* Asked before any read: the header says (a new, empty file has none yet). */
      unsigned char header[100];
      if (!p->on && below->pMethods->xRead(below, header, sizeof(header), 0) == SQLITE_OK)
        note_header(p, header);
      pragma[0] = sqlite3_mprintf("%d", p->on);
      return SQLITE_OK;
    }
    /* A checksummed file keeps its page size: a VACUUM to another would move every sum. */
    if (p->on && pragma[2] != 0 && sqlite3_stricmp(pragma[1], "page_size") == 0) return SQLITE_OK;
  }
  int rc = below->pMethods->xFileControl(below, op, arg);
  if (rc == SQLITE_OK && op == SQLITE_FCNTL_VFSNAME)
    *(char **)arg = sqlite3_mprintf(PC_VFS_NAME "/%z", *(char **)arg);
  return rc;
}

static int pcSectorSize(sqlite3_file *f) {
  sqlite3_file *below = BELOW(f);
  return below->pMethods->xSectorSize(below);
}

/*
 * Without SUBPAGE_READ: SQLite would otherwise read overflow pages (the long blobs, the titles'
 * index) straight into the caller's buffer without their last bytes, so without their sums.
 */
static int pcDeviceCharacteristics(sqlite3_file *f) {
  PcFile *p = (PcFile *)f;
  sqlite3_file *below = BELOW(f);
  int caps = below->pMethods->xDeviceCharacteristics(below);
  return p->on ? caps & ~SQLITE_IOCAP_SUBPAGE_READ : caps;
}

static int pcShmMap(sqlite3_file *f, int region, int size, int extend, void volatile **pp) {
  sqlite3_file *below = BELOW(f);
  return below->pMethods->xShmMap(below, region, size, extend, pp);
}

static int pcShmLock(sqlite3_file *f, int offset, int n, int flags) {
  sqlite3_file *below = BELOW(f);
  return below->pMethods->xShmLock(below, offset, n, flags);
}

static void pcShmBarrier(sqlite3_file *f) {
  sqlite3_file *below = BELOW(f);
  below->pMethods->xShmBarrier(below);
}

static int pcShmUnmap(sqlite3_file *f, int deleteFlag) {
  sqlite3_file *below = BELOW(f);
  return below->pMethods->xShmUnmap(below, deleteFlag);
}

/* No memory map for a checksummed file: a mapped page is read without passing through xRead. */
static int pcFetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp) {
  PcFile *p = (PcFile *)f;
  sqlite3_file *below = BELOW(f);
  *pp = 0;
  if (p->on || below->pMethods->iVersion < 3 || !below->pMethods->xFetch) return SQLITE_OK;
  return below->pMethods->xFetch(below, off, n, pp);
}

static int pcUnfetch(sqlite3_file *f, sqlite3_int64 off, void *page) {
  sqlite3_file *below = BELOW(f);
  if (below->pMethods->iVersion < 3 || !below->pMethods->xUnfetch) return SQLITE_OK;
  return below->pMethods->xUnfetch(below, off, page);
}

static const sqlite3_io_methods pc_io_methods = {
    3,
    pcClose,
    pcRead,
    pcWrite,
    pcTruncate,
    pcSync,
    pcFileSize,
    pcLock,
    pcUnlock,
    pcCheckReservedLock,
    pcFileControl,
    pcSectorSize,
    pcDeviceCharacteristics,
    pcShmMap,
    pcShmLock,
    pcShmBarrier,
    pcShmUnmap,
    pcFetch,
    pcUnfetch,
};

/* Main database files (attached ones too) get the shim; every other file is the VFS below's. */
static int pcOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *outFlags) {
  sqlite3_vfs *below = BELOW_VFS(vfs);
  if ((flags & SQLITE_OPEN_MAIN_DB) == 0) return below->xOpen(below, name, f, flags, outFlags);
  PcFile *p = (PcFile *)f;
  memset(p, 0, sizeof(*p));
  p->name = name;
  int rc = below->xOpen(below, name, BELOW(f), flags, outFlags);
  f->pMethods = rc == SQLITE_OK ? &pc_io_methods : 0;
  return rc;
}

static int pcDelete(sqlite3_vfs *vfs, const char *name, int syncDir) {
  return BELOW_VFS(vfs)->xDelete(BELOW_VFS(vfs), name, syncDir);
}

static int pcAccess(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
  return BELOW_VFS(vfs)->xAccess(BELOW_VFS(vfs), name, flags, out);
}

static int pcFullPathname(sqlite3_vfs *vfs, const char *name, int n, char *out) {
  return BELOW_VFS(vfs)->xFullPathname(BELOW_VFS(vfs), name, n, out);
}

static void *pcDlOpen(sqlite3_vfs *vfs, const char *path) {
  return BELOW_VFS(vfs)->xDlOpen(BELOW_VFS(vfs), path);
}

static void pcDlError(sqlite3_vfs *vfs, int n, char *out) {
  BELOW_VFS(vfs)->xDlError(BELOW_VFS(vfs), n, out);
}

static void (*pcDlSym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
  return BELOW_VFS(vfs)->xDlSym(BELOW_VFS(vfs), handle, symbol);
}

static void pcDlClose(sqlite3_vfs *vfs, void *handle) {
  BELOW_VFS(vfs)->xDlClose(BELOW_VFS(vfs), handle);
}

static int pcRandomness(sqlite3_vfs *vfs, int n, char *out) {
  return BELOW_VFS(vfs)->xRandomness(BELOW_VFS(vfs), n, out);
}

static int pcSleep(sqlite3_vfs *vfs, int micro) {
  return BELOW_VFS(vfs)->xSleep(BELOW_VFS(vfs), micro);
}

static int pcCurrentTime(sqlite3_vfs *vfs, double *out) {
  return BELOW_VFS(vfs)->xCurrentTime(BELOW_VFS(vfs), out);
}

static int pcGetLastError(sqlite3_vfs *vfs, int n, char *out) {
  return BELOW_VFS(vfs)->xGetLastError(BELOW_VFS(vfs), n, out);
}

static int pcCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
  sqlite3_vfs *below = BELOW_VFS(vfs);
  if (below->iVersion >= 2 && below->xCurrentTimeInt64) return below->xCurrentTimeInt64(below, out);
  double days;
  int rc = below->xCurrentTime(below, &days);
  *out = (sqlite3_int64)(days * 86400000.0);
  return rc;
}

static int pcSetSystemCall(sqlite3_vfs *vfs, const char *name, sqlite3_syscall_ptr call) {
  return BELOW_VFS(vfs)->xSetSystemCall(BELOW_VFS(vfs), name, call);
}

static sqlite3_syscall_ptr pcGetSystemCall(sqlite3_vfs *vfs, const char *name) {
  return BELOW_VFS(vfs)->xGetSystemCall(BELOW_VFS(vfs), name);
}

static const char *pcNextSystemCall(sqlite3_vfs *vfs, const char *name) {
  return BELOW_VFS(vfs)->xNextSystemCall(BELOW_VFS(vfs), name);
}

static sqlite3_vfs pc_vfs = {
    0, /* iVersion, szOsFile and pAppData: the VFS below's, when registered */
    0,
    1024,
    0,
    PC_VFS_NAME,
    0,
    pcOpen,
    pcDelete,
    pcAccess,
    pcFullPathname,
    pcDlOpen,
    pcDlError,
    pcDlSym,
    pcDlClose,
    pcRandomness,
    pcSleep,
    pcCurrentTime,
    pcGetLastError,
    pcCurrentTimeInt64,
    pcSetSystemCall,
    pcGetSystemCall,
    pcNextSystemCall,
};

/*
 * enable_page_checksums(SCHEMA): asks SQLite to reserve 8 bytes a page in that database. It takes
 * only before the first page is written (a new, empty file); PRAGMA page_checksums then says '1'
 * once the first table is written. Returns the reserve the file will have: the header's, when the
 * file has one already (SQLite only remembers what was asked for then).
 */
static void enablePageChecksums(sqlite3_context *context, int argc, sqlite3_value **argv) {
  (void)argc;
  const char *schema = (const char *)sqlite3_value_text(argv[0]);
  if (schema == 0) schema = "main";
  sqlite3 *db = sqlite3_context_db_handle(context);
  int reserve = PC_RESERVE;
  int rc = sqlite3_file_control(db, schema, SQLITE_FCNTL_RESERVE_BYTES, &reserve);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(context, rc);
    return;
  }
  reserve = -1; /* asks without changing */
  sqlite3_file_control(db, schema, SQLITE_FCNTL_RESERVE_BYTES, &reserve);
  sqlite3_file *file = 0;
  sqlite3_int64 size = 0;
  unsigned char header[100];
  if (sqlite3_file_control(db, schema, SQLITE_FCNTL_FILE_POINTER, &file) == SQLITE_OK && file != 0 &&
      file->pMethods != 0 && file->pMethods->xFileSize(file, &size) == SQLITE_OK && size >= 100 &&
      file->pMethods->xRead(file, header, sizeof(header), 0) == SQLITE_OK)
    reserve = header[20];
  sqlite3_result_int(context, reserve);
}

static int registerFunctions(sqlite3 *db, char **error, const sqlite3_api_routines *api) {
  (void)error;
  (void)api;
  return sqlite3_create_function(db, "enable_page_checksums", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, 0,
                                 enablePageChecksums, 0, 0);
}

PC_EXPORT int sqlite3_pagechecksums_init(sqlite3 *db, char **error, const sqlite3_api_routines *api) {
  SQLITE_EXTENSION_INIT2(api);
  (void)error;
  /* Loaded again (another thread, another connection): registered already, by the first load. */
  if (sqlite3_vfs_find(PC_VFS_NAME) == 0) {
    sqlite3_vfs *below = sqlite3_vfs_find(0);
    if (below == 0) return SQLITE_ERROR;
    pc_vfs.iVersion = below->iVersion;
    pc_vfs.szOsFile = (int)sizeof(PcFile) + below->szOsFile;
    pc_vfs.mxPathname = below->mxPathname;
    pc_vfs.pAppData = below;
    int rc = sqlite3_vfs_register(&pc_vfs, 1);
    if (rc != SQLITE_OK) return rc;
  }
  /* Every connection opened from now on gets the function (once only, however often this runs). */
  int rc = sqlite3_auto_extension((void (*)(void))registerFunctions);
  if (rc == SQLITE_OK) rc = registerFunctions(db, error, api);
  return rc == SQLITE_OK ? SQLITE_OK_LOAD_PERMANENTLY : rc;
}

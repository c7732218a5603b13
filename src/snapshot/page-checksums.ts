import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import Database from 'better-sqlite3';
import { nativeLibrary } from '../util/native-library.js';

/**
 * Page checksums (native/page-checksums.c, a SQLite extension built with the project): once loaded,
 * every database file opened in the process goes through a VFS that keeps an 8-byte checksum at
 * the end of each page of a file written with them, and fails the read of a page that does not
 * match with SQLITE_IOERR_DATA. So a snapshot written with them can be served at once: each query
 * checks the pages it reads, and the whole-file hash runs behind (snapshot.ts). Files written
 * without them pass through unchanged.
 */

/** The extension, built by scripts/build-native.mjs (`npm run build`). */
export const PAGE_CHECKSUMS_LIBRARY = nativeLibrary('page-checksums');

/** The bytes at the end of each page that hold its checksum. */
const RESERVE = 8;

export interface PageChecksums {
  loaded: boolean;
  /** Why the extension could not be loaded (null when it is). */
  problem: string | null;
}

let state: PageChecksums | null = null;

/**
 * Loads the extension into this process's SQLite, once (each thread asks; the first load registers
 * the VFS for all). Must come before a snapshot file is opened, since a connection keeps the VFS
 * it was opened with. Never throws: without the extension, `problem` says why.
 */
export function pageChecksums(): PageChecksums {
  if (state) return state;
  if (!existsSync(PAGE_CHECKSUMS_LIBRARY)) {
    state = {
      loaded: false,
      problem: `${PAGE_CHECKSUMS_LIBRARY} is missing (npm run build compiles it; it needs a C compiler)`,
    };
    return state;
  }
  try {
    const db = new Database(':memory:');
    try {
      // Its entry point, sqlite3_pagechecksums_init, SQLite derives from the file's name.
      db.loadExtension(PAGE_CHECKSUMS_LIBRARY);
    } finally {
      db.close();
    }
    state = { loaded: true, problem: null };
  } catch (e) {
    state = { loaded: false, problem: `${PAGE_CHECKSUMS_LIBRARY} cannot be loaded: ${(e as Error).message}` };
  }
  return state;
}

/**
 * Makes the new, empty database open on `db` keep page checksums: to be called before its first
 * table (once a page is written the reserve can no longer change). The extension must be loaded.
 */
export function enablePageChecksums(db: Database.Database): void {
  const reserve = db.prepare("SELECT enable_page_checksums('main')").pluck().get();
  if (reserve !== RESERVE)
    throw new Error(`page checksums: SQLite reserves ${String(reserve)} bytes a page, not 8`);
}

/** Whether the file open on `db` has its pages checked as they are read (the extension's PRAGMA). */
export function pagesChecked(db: Database.Database): boolean {
  // Without the extension the pragma is unknown to SQLite, which answers nothing.
  return Number(db.pragma('page_checksums', { simple: true }) ?? 0) === 1;
}

/**
 * Whether the file at `path` was written with page checksums and is whole, from its header alone
 * (100 bytes): SQLite's magic, 8 bytes reserved a page, and a size of exactly its page count times
 * its page size. Cheap whatever the file's size; damage within the pages is found as they are read.
 */
export function checksummedFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const header = Buffer.alloc(100);
    if (readSync(fd, header, 0, 100, 0) !== 100) return false;
    if (header.toString('latin1', 0, 16) !== 'SQLite format 3\0' || header[20] !== RESERVE) return false;
    const raw = header.readUInt16BE(16);
    const pageSize = raw === 1 ? 65_536 : raw;
    // The page count in the header is valid when its "version-valid-for" matches the change counter.
    if (header.readUInt32BE(92) !== header.readUInt32BE(24)) return false;
    const pages = header.readUInt32BE(28);
    return pages > 0 && fstatSync(fd).size === pages * pageSize;
  } finally {
    closeSync(fd);
  }
}

import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import {
  checksummedFile,
  enablePageChecksums,
  PAGE_CHECKSUMS_LIBRARY,
  pageChecksums,
  pagesChecked,
} from '../../../src/snapshot/page-checksums.js';
import { Snapshot, SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { buildSnapshot } from '../../../src/snapshot-build/build-snapshot.js';
import { emptyState } from '../../helpers/app.js';
import { until } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { TITLES, tempDir, work, writeWorks } from '../../helpers/works.js';

/**
 * Snapshots carry a checksum in each page (native/page-checksums.c), checked as SQLite reads the
 * page: a server serves a snapshot at once and hashes it behind, and a damaged page is met as a
 * 503 data_unavailable, never as an answer with wrong bytes.
 */

const PAGE = 8192;
/** A whole second, so that a test can put a file's mtime back exactly after it writes to it. */
const MTIME = 1_700_000_000;

interface Served {
  dir: string;
  version: string;
  snapshots: SnapshotManager;
  state: StateStore;
  server: RunningServer;
  key: string;
  logged: string[];
  /** What was served and logged once `start()` resolved (before any other step of the server's start). */
  atStart: { version: string | null; logged: string[] };
}

let running: Served | null = null;
afterEach(async () => {
  await running?.server.close();
  running?.snapshots.stop();
  await running?.state.close();
  running = null;
});

/** A server (real HTTP, in this process) on the sample's snapshot; `before` runs on its folder first. */
async function serveSample(before: (dir: string, version: string) => void = () => {}): Promise<Served> {
  const sample = await sampleDataDir();
  utimesSync(snapshotFile(sample.snapshots, sample.version), MTIME, MTIME);
  before(sample.snapshots, sample.version);
  const logged: string[] = [];
  const snapshots = new SnapshotManager(sample.snapshots, (m) => logged.push(m));
  await snapshots.start();
  const atStart = { version: snapshots.version, logged: [...logged] };
  const state = await emptyState();
  const account = await state.createAccount({ email: 'free@example.org', plan: 'free' });
  const { key } = await state.createKey(account.id);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    WORKER_THREADS: '0',
    RATE_LIMIT_PER_IP: '100000',
  });
  const server = await startServer(config, snapshots, state, () => {});
  running = {
    dir: sample.snapshots,
    version: sample.version,
    snapshots,
    state,
    server,
    key,
    logged,
    atStart,
  };
  return running;
}

async function get(s: Served, path: string) {
  const res = await fetch(`${s.server.url}${path}`, { headers: { authorization: `Bearer ${s.key}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Iron's yearly history, the request that reads the page damaged below. */
const FE_HISTORY = '/v1/elements/Fe/history';

/** Where in the file at `path` Iron's yearly series lies: the offset of bytes of it that occur once. */
function ironHistoryAt(path: string): number {
  const db = new Database(path, { readonly: true });
  const series = db
    .prepare("SELECT series FROM history WHERE type = 'element' AND id = 'Fe' AND resolution = 'yearly'")
    .pluck()
    .get() as Buffer;
  db.close();
  const probe = series.subarray(Math.max(0, (series.length >> 1) - 24), (series.length >> 1) + 24);
  expect(probe.length).toBeGreaterThanOrEqual(24);
  const bytes = readFileSync(path);
  const at = bytes.indexOf(probe);
  expect(at).toBeGreaterThan(0);
  expect(bytes.lastIndexOf(probe)).toBe(at);
  return at;
}

/** The page (0-based) that holds Iron's yearly series. */
const pageOfIronHistory = (path: string) => Math.floor(ironHistoryAt(path) / PAGE);

/**
 * Flips one bit of Iron's yearly series in the file, its size, mtime and inode kept: bit rot. The
 * page stays well-formed, so without its checksum SQLite reads it without complaint and the
 * history is answered with other numbers.
 */
function flipIronHistory(path: string): void {
  const at = ironHistoryAt(path) + 10;
  const { mtimeMs } = statSync(path);
  const fd = openSync(path, 'r+');
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, at);
    byte[0]! ^= 0x10;
    writeSync(fd, byte, 0, 1, at);
  } finally {
    closeSync(fd);
  }
  utimesSync(path, mtimeMs / 1000, mtimeMs / 1000);
  expect(statSync(path).mtimeMs).toBe(mtimeMs);
}

/**
 * Overwrites page `target` (0-based) with the bytes of page `source` of the same file, as a write
 * sent to the wrong place would: a well-formed page, its size, mtime and inode kept, so neither
 * SQLite's page checks nor the folder watcher can tell; only the checksum (which counts the page
 * number) can.
 */
function overwritePage(path: string, target: number, source: number): void {
  const { mtimeMs } = statSync(path);
  const fd = openSync(path, 'r+');
  try {
    const page = Buffer.alloc(PAGE);
    readSync(fd, page, 0, PAGE, source * PAGE);
    const before = Buffer.alloc(PAGE);
    readSync(fd, before, 0, PAGE, target * PAGE);
    expect(page.equals(before)).toBe(false);
    writeSync(fd, page, 0, PAGE, target * PAGE);
  } finally {
    closeSync(fd);
  }
  utimesSync(path, mtimeMs / 1000, mtimeMs / 1000);
  expect(statSync(path).mtimeMs).toBe(mtimeMs);
}

const quarantined = (dir: string) =>
  existsSync(join(dir, 'quarantine')) ? readdirSync(join(dir, 'quarantine')) : [];

describe('the page checksum extension', () => {
  it('is built with the project, loaded, and every snapshot the pipeline writes has its pages checked', async () => {
    expect(existsSync(PAGE_CHECKSUMS_LIBRARY)).toBe(true);
    expect(pageChecksums()).toEqual({ loaded: true, problem: null });
    const sample = await sampleDataDir();
    const file = snapshotFile(sample.snapshots, sample.version);
    expect(checksummedFile(file)).toBe(true);
    const snapshot = new Snapshot(sample.version, file);
    try {
      expect(snapshot.pagesChecked).toBe(true);
      // Its reads go through the extension's VFS (SQLite names it).
      expect(snapshot.db.pragma('page_checksums', { simple: true })).toBe('1');
    } finally {
      snapshot.retire();
    }
  });

  it('fails the read of a page that does not match: flipped bytes, or a page written at another place', () => {
    pageChecksums();
    const path = join(tempDir('ri-pages-'), 'pages.sqlite');
    const db = new Database(path);
    db.pragma('journal_mode = OFF');
    db.pragma(`page_size = ${PAGE}`);
    enablePageChecksums(db);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
    expect(pagesChecked(db)).toBe(true);
    const insert = db.prepare('INSERT INTO t VALUES (?, ?)');
    db.transaction(() => {
      for (let i = 0; i < 64; i++) insert.run(i, Buffer.alloc(3000, i));
    })();
    db.close();
    expect(checksummedFile(path)).toBe(true);
    const sum = () => {
      const reader = new Database(path, { readonly: true });
      try {
        return reader.prepare('SELECT sum(unicode(substr(body, 2000, 1))) FROM t').pluck().get();
      } finally {
        reader.close();
      }
    };
    expect(sum()).toBe((63 * 64) / 2);
    const good = readFileSync(path);
    const failsWith = (damaged: Buffer) => {
      writeFileSync(path, damaged);
      try {
        sum();
        return 'read';
      } catch (e) {
        return (e as { code?: string }).code;
      } finally {
        writeFileSync(path, good);
      }
    };
    const flipped = Buffer.from(good);
    flipped[10 * PAGE + 1000]! ^= 0x01;
    expect(failsWith(flipped)).toBe('SQLITE_IOERR_DATA');
    // Page 12 written where page 11 was: a well-formed page with a right checksum for page 12.
    const moved = Buffer.from(good);
    good.copy(moved, 10 * PAGE, 11 * PAGE, 12 * PAGE);
    expect(failsWith(moved)).toBe('SQLITE_IOERR_DATA');
    // A page of zeros (its checksum too).
    const zeroed = Buffer.from(good);
    zeroed.fill(0, 10 * PAGE, 11 * PAGE);
    expect(failsWith(zeroed)).toBe('SQLITE_IOERR_DATA');
    expect(sum()).toBe((63 * 64) / 2);
    // A truncated file is not taken for a whole one by its header.
    truncateSync(path, good.length - PAGE);
    expect(checksummedFile(path)).toBe(false);
  });

  it('is refused on a database that already has pages', () => {
    pageChecksums();
    const db = new Database(join(tempDir('ri-pages-'), 'late.sqlite'));
    db.exec('CREATE TABLE t (x)');
    expect(() => enablePageChecksums(db)).toThrow(/reserves 0 bytes/);
    expect(pagesChecked(db)).toBe(false);
    db.close();
  });
});

describe('a served snapshot with page checksums', () => {
  it('is hashed behind; a bit flipped on disk afterwards answers 503 data_unavailable, never other numbers', async () => {
    const s = await serveSample();
    const file = snapshotFile(s.dir, s.version);
    expect(s.snapshots.version).toBe(s.version);
    const list = await get(s, '/v1/elements');
    expect(list.status).toBe(200);
    // The hash behind finishes and matches: from here only the pages' checksums can tell.
    await until(() => (s.logged.some((m) => m.includes('whole-file hash matches')) ? true : undefined));

    flipIronHistory(file);
    const met = await get(s, FE_HISTORY);
    expect(met.status).toBe(503);
    expect(met.body.code).toBe('data_unavailable');
    // Proven damaged by the page itself: quarantined without being hashed again.
    await until(() => (quarantined(s.dir).length === 1 ? true : undefined));
    expect(s.logged.join('\n')).toMatch(/damaged \(a page does not match its checksum while it was served\)/);
    expect(s.snapshots.version).toBeNull();
    expect((await get(s, FE_HISTORY)).body.code).toBe('data_unavailable');
  });

  it('when damaged before the server starts, is served at once and its damaged page is never sent', async () => {
    // The answers of the undamaged file, to compare with.
    const reference = await serveSample();
    const goodList = await get(reference, '/v1/elements');
    expect(goodList.status).toBe(200);
    expect((await get(reference, FE_HISTORY)).status).toBe(200);
    await reference.server.close();
    reference.snapshots.stop();
    await reference.state.close();
    running = null;

    const s = await serveSample((dir, version) => {
      const file = snapshotFile(dir, version);
      const page = pageOfIronHistory(file);
      overwritePage(file, page, page + 1);
    });
    // Served once started, before its hash had read the file.
    expect(s.atStart.version).toBe(s.version);
    expect(s.atStart.logged.some((m) => m.includes('whole-file hash'))).toBe(false);
    const [history, list] = await Promise.all([get(s, FE_HISTORY), get(s, '/v1/elements')]);
    expect(history).toMatchObject({ status: 503, body: { code: 'data_unavailable' } });
    // Either answered from pages that are whole, or set aside already: never other bytes.
    if (list.status === 200) expect(list.body).toEqual(goodList.body);
    else expect(list.body.code).toBe('data_unavailable');
    await until(() => (quarantined(s.dir).length === 1 ? true : undefined));
    expect(s.snapshots.version).toBeNull();
    expect((await get(s, '/v1/elements')).body.code).toBe('data_unavailable');
  });

  it('whose damage no query meets is found by the hash behind, and quarantined', async () => {
    const s = await serveSample((dir, version) => {
      const file = snapshotFile(dir, version);
      const pages = statSync(file).size / PAGE;
      // A page none of the requests below reads (the paper rows' end of the file).
      overwritePage(file, pages - 2, pages - 3);
    });
    expect(s.atStart.version).toBe(s.version);
    await until(() => (quarantined(s.dir).length === 1 ? true : undefined));
    expect(s.logged.join('\n')).toMatch(
      /damaged \(its bytes do not hash to its data_version while it was served\)/,
    );
    expect(s.snapshots.version).toBeNull();
    expect((await get(s, '/v1/elements')).body.code).toBe('data_unavailable');
  });
});

describe('a snapshot without page checksums (written before them)', () => {
  /** A small corpus built by the real pipeline, its snapshot written as builds before checksums did. */
  async function legacySnapshot() {
    const root = tempDir('ri-legacy-');
    const corpus = join(root, 'corpus.duckdb');
    await ingest(
      corpus,
      expandWorksPaths([
        writeWorks(
          join(root, 'works.jsonl'),
          TITLES.map((title, i) => work(i + 1, { title })),
        ),
      ]),
    );
    const dir = join(root, 'snapshots');
    const built = await buildSnapshot(corpus, dir, { pageChecksums: false });
    const again = await buildSnapshot(corpus, join(root, 'again'), { pageChecksums: false });
    const checked = await buildSnapshot(corpus, join(root, 'checked'));
    return { dir, built, again, checked };
  }

  it('is hashed before it is served, so a damaged one is never opened; its data_version is its own', async () => {
    const { dir, built, again, checked } = await legacySnapshot();
    // The same corpus, the same bytes: with page checksums or without (which differ from each other).
    expect(again.version).toBe(built.version);
    expect(checked.version).not.toBe(built.version);
    expect(checksummedFile(built.file)).toBe(false);
    expect(checksummedFile(checked.file)).toBe(true);

    const logged: string[] = [];
    const whole = new SnapshotManager(dir, (m) => logged.push(m));
    await whole.start();
    const served = whole.acquire()!;
    expect(served.version).toBe(built.version);
    expect(served.pagesChecked).toBe(false);
    served.release();
    expect(logged.join('\n')).toMatch(/has no page checksums: hashing it whole before it is served/);
    whole.stop();

    const pages = statSync(built.file).size / PAGE;
    utimesSync(built.file, MTIME, MTIME);
    overwritePage(built.file, pages >> 1, (pages >> 1) + 1);
    const damaged = new SnapshotManager(dir);
    await damaged.start();
    expect(damaged.version).toBeNull();
    expect(quarantined(dir)).toHaveLength(1);
    damaged.stop();
  });
});

import type { FSWatcher } from 'node:fs';
import { watch } from 'node:fs';
import Database from 'better-sqlite3';
import { fileHash } from './file-hash.js';
import { fileStamp, listSnapshotVersions, readPointer, readPointerName, snapshotFile } from './folder.js';
import { quarantineSnapshot, servableAtOnce, verifySnapshot } from './integrity.js';
import { pageChecksums, pagesChecked } from './page-checksums.js';
import { paperColumn } from './paper-columns.js';
import { PinnedSnapshots } from './pinned.js';
import { readPublications } from './publication-log.js';
import { type SnapshotView, SqliteSnapshotReader, type TitleRankingOptions } from './reader.js';

/** One open, read-only snapshot. Requests hold it (acquire/release) while they run. */
export class Snapshot implements SnapshotView {
  readonly db: Database.Database;
  /** Every query the service makes of this snapshot, each prepared once on first use. */
  readonly reader: SqliteSnapshotReader;
  readonly meta: Readonly<Record<string, string>>;
  /**
   * The file opened (size, mtime and inode): a worker thread keys its connections by it, so a file
   * quarantined and rewritten under the same name is opened again rather than read through the old
   * connection, which still reads the damaged bytes.
   */
  readonly file: string;
  /**
   * Whether its pages are checked as SQLite reads them (page-checksums.ts): a damaged page then
   * fails its query with SQLITE_IOERR_DATA rather than answer with wrong bytes.
   */
  readonly pagesChecked: boolean;
  private holders = 0;
  private retired = false;
  private aside = false;
  /** Per-snapshot memo for derived answers (e.g. the element list), dropped with the snapshot. */
  readonly memo = new Map<string, unknown>();

  constructor(
    readonly version: string,
    /** The file, so a worker thread can open the same snapshot. */
    readonly path: string,
    /**
     * SQLite's page cache in KiB, and whether to map the file (256 MiB): the served snapshot's
     * connection has both; a worker thread's has a small cache and no map, since every mapping
     * of the same pages counts again in the process's RSS. A file with page checksums is never
     * mapped: a mapped page is read without its checksum being checked.
     * `checkedPages`: the file was opened with its pages checked elsewhere (a worker thread opens
     * what the main thread did), so it must be here too: when its header no longer says so (it
     * changed since), opening it fails as SQLite corruption does.
     */
    options: {
      cacheKib?: number;
      mmap?: boolean;
      titleRanking?: TitleRankingOptions;
      checkedPages?: boolean;
    } = {},
  ) {
    this.file = fileStamp(path)?.key ?? '';
    // Before the file is opened: a connection keeps the VFS it was opened with.
    pageChecksums();
    this.db = new Database(path, { readonly: true, fileMustExist: true });
    this.pagesChecked = pagesChecked(this.db);
    if (options.checkedPages && !this.pagesChecked) {
      this.db.close();
      throw Object.assign(new Error(`snapshot ${version} no longer has page checksums`), {
        code: 'SQLITE_CORRUPT',
      });
    }
    this.db.pragma(`cache_size = -${Math.floor(options.cacheKib ?? 65_536)}`);
    this.db.pragma(`mmap_size = ${options.mmap === false || this.pagesChecked ? 0 : 268_435_456}`);
    this.reader = new SqliteSnapshotReader(this.db, (name) => paperColumn(this, name), options.titleRanking);
    this.meta = this.reader.meta();
  }

  acquire(): void {
    this.holders++;
  }

  release(): void {
    this.holders--;
    if (this.retired && this.holders === 0) this.close();
  }

  /**
   * Whether its file was found damaged or changed in place: no answer from it may be sent any
   * more, though requests that began on it still hold it (they answer 503 data_unavailable).
   */
  get isSetAside(): boolean {
    return this.aside;
  }

  /** Its file was found damaged or changed: every answer derived and kept from it is dropped at once. */
  setAside(): void {
    this.aside = true;
    this.memo.clear();
  }

  /** Called when a newer snapshot replaces this one: closes once the last request lets go. */
  retire(): void {
    this.retired = true;
    if (this.holders === 0) this.close();
  }

  private close(): void {
    this.reader.close();
    this.db.close();
  }

  forget(key: string): void {
    this.memo.delete(key);
  }

  memoize<T>(key: string, compute: () => T): T {
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const value = compute();
    this.memo.set(key, value);
    return value;
  }
}

/** The schema version a snapshot file was written with (0 when unreadable). */
export function snapshotSchemaVersion(path: string): number {
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      const v = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get();
      return Number(v ?? 0);
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

/** What /readyz and the log say about the snapshots: which one is served, and why not the current one. */
export interface SnapshotHealth {
  /** The version being served, null when none can be read. */
  serving: string | null;
  /** The version the CURRENT pointer names. */
  current: string | null;
  /** Why the served version is not the current one (a damaged file, quarantined), or null. */
  problem: string | null;
}

/**
 * Follows the published CURRENT pointer and swaps to a newly published snapshot without a restart.
 * A request acquires the snapshot that is current when it starts and keeps it to the end, so no
 * request mixes two data versions; the old file is closed when its last request finishes.
 *
 * Snapshots defend themselves. A file written with page checksums (page-checksums.ts) is served
 * as soon as its header says it is whole, since every page a query reads is checked against its
 * checksum; its whole-file hash runs behind, one file at a time. A file without them (written
 * before them, or where the extension cannot be loaded) is opened only once its bytes hash to its
 * version. An open one whose file changes (its size, mtime or inode: seen at the folder's change
 * event or the next poll), that SQLite reports corrupt, that has a page not matching its checksum,
 * or whose hash behind does not match, is set aside at once: no answer from it is sent any more
 * and every answer kept from it is dropped (`Snapshot.setAside`, `onForget`). Then a damaged one
 * is quarantined (a checksum or hash that does not match proves it; anything else is hashed
 * first) and the newest good one served (PREVIOUS, then any other published file), with
 * `health()` saying so, until `ri build` rewrites it; one whose bytes are unchanged is opened again.
 *
 * Older kept snapshots answer reads pinned with data_version (acquireVersion): each is opened on
 * first use, verified like the current one, kept open in a small LRU, and closed when it is
 * pruned, changes, or falls out of the LRU.
 */
export class SnapshotManager {
  private current: Snapshot | null = null;
  private currentStamp: string | null = null;
  private problem: string | null = null;
  /** Files that failed and could not be moved aside, by version: their stamp, so each is reported once. */
  private readonly rejected = new Map<string, string>();
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<boolean> | null = null;
  private again = false;
  private stopped = false;
  private readonly listeners: ((s: Snapshot) => void)[] = [];
  private readonly forgetting: ((version: string) => void)[] = [];
  private readonly unservable: (() => void)[] = [];
  /**
   * Versions set aside because their file changed or was suspected, to be hashed by the next step;
   * `proven`: the file it opened (its stamp) was found damaged already, and is condemned unhashed
   * if it is still there.
   */
  private readonly unchecked: { version: string; why: string; served: boolean; proven?: string }[] = [];
  /** Why an open snapshot is known damaged (a page or its hash did not match), once it is. */
  private readonly proven = new WeakMap<Snapshot, string>();
  /** The whole-file hashes of snapshots served at once, one after the other; stopped with the manager. */
  private behind: Promise<void> = Promise.resolve();
  private readonly stopping = new AbortController();
  private readonly pinned = new PinnedSnapshots<Snapshot>();
  /** Pinned versions being opened (and verified), so concurrent first reads share one open. */
  private readonly opening = new Map<string, Promise<Snapshot | null>>();

  constructor(
    readonly dir: string,
    private readonly log: (msg: string) => void = () => {},
    private readonly warn: (msg: string) => void = log,
  ) {}

  /** Opens the current snapshot (if any, or the newest good one) and starts following the pointer. */
  async start(pollMs = 1000): Promise<void> {
    const checksums = pageChecksums();
    if (!checksums.loaded)
      this.warn(
        `page checksums unavailable (${checksums.problem}): each snapshot is hashed whole before it is served`,
      );
    await this.refresh();
    // A change seen sets aside the snapshots it touches in the same turn; the check comes after.
    const changed = () => {
      this.noticeChanges();
      void this.refresh();
    };
    try {
      this.watcher = watch(this.dir, changed);
      this.watcher.on('error', () => {});
    } catch {
      // The folder may not exist yet; polling picks the first snapshot up.
    }
    this.timer = setInterval(changed, pollMs);
    this.timer.unref();
  }

  /**
   * Re-reads CURRENT, re-checks the served file, and switches when another version should be
   * served. Calls made while one runs share it (and it runs once more). Resolves true on a switch.
   */
  refresh(): Promise<boolean> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      let switched = false;
      do {
        this.again = false;
        switched = (await this.step()) || switched;
      } while (this.again);
      return switched;
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * A request met SQLite corruption in `snapshot` (`cause`, SQLite's error): it is set aside now
   * and its bytes checked, rather than at the next poll. A page that did not match its checksum
   * needs no hash: the file is condemned at once. Resolves once the check (and any fallback) is done.
   */
  suspect(snapshot: Snapshot, cause?: unknown): Promise<boolean> {
    if (provesDamage(cause) && !this.proven.has(snapshot))
      this.proven.set(snapshot, 'a page does not match its checksum');
    if (snapshot === this.current) this.currentStamp = null;
    else if (this.pinned.versions().includes(snapshot.version)) this.pinned.restamp(snapshot.version, '');
    else if (!snapshot.isSetAside) {
      // Open for requests that began on it only (replaced since): its file is checked all the same.
      this.setAside(snapshot);
      this.unchecked.push({
        version: snapshot.version,
        why: this.proven.get(snapshot) ?? 'SQLite found it damaged',
        served: false,
        proven: this.provenFile(snapshot),
      });
    }
    this.noticeChanges(snapshot);
    return this.refresh();
  }

  /**
   * Sets aside at once, before any check, each open snapshot whose file changed since it was
   * opened or checked, or that was `suspected`: the served one and the pinned ones. Their versions
   * are hashed by the next step; a pinned one whose file is gone (pruned) is closed.
   */
  private noticeChanges(suspected?: Snapshot): void {
    const why = (s: Snapshot, open: string) =>
      s === suspected
        ? `${this.proven.get(s) ?? 'SQLite found it damaged'} while it was ${open}`
        : `its bytes changed while it was ${open}`;
    const proven = (s: Snapshot) => (s === suspected ? this.provenFile(s) : undefined);
    const served = this.current;
    if (served && (fileStamp(snapshotFile(this.dir, served.version))?.key ?? null) !== this.currentStamp) {
      this.current = null;
      this.currentStamp = null;
      this.setAside(served);
      served.retire();
      this.unchecked.push({
        version: served.version,
        why: why(served, 'served'),
        served: true,
        proven: proven(served),
      });
      this.warn(`snapshot ${served.version} set aside (${why(served, 'served')}); checking its bytes`);
    }
    for (const [version, stamp] of this.pinned.stamps()) {
      const now = fileStamp(snapshotFile(this.dir, version))?.key ?? null;
      if (now === stamp) continue;
      const pinned = this.pinned.get(version)!;
      if (now === null) this.log(`closed snapshot ${version}: no longer kept`);
      else {
        this.setAside(pinned);
        this.unchecked.push({ version, why: why(pinned, 'open'), served: false, proven: proven(pinned) });
      }
      this.pinned.drop(version);
      this.forget(version);
    }
  }

  private async step(): Promise<boolean> {
    this.noticeChanges();
    // Set aside already, and hashed anew (its stamp may not have changed) unless it was proven
    // damaged: a damaged file is quarantined; one whose bytes are unchanged is opened again below
    // (served) or at its next pinned read.
    let dropped = false;
    for (let next = this.unchecked.shift(); next; next = this.unchecked.shift()) {
      dropped ||= next.served;
      const stillThere =
        next.proven !== undefined && fileStamp(snapshotFile(this.dir, next.version))?.key === next.proven;
      if (stillThere || !(await verifySnapshot(this.dir, next.version, true)))
        this.condemn(next.version, next.why);
    }
    const pointed = readPointerName(this.dir, 'CURRENT');
    const wanted = readPointer(this.dir, 'CURRENT');
    if (wanted && wanted === this.current?.version) {
      this.problem = null;
      return false;
    }
    // A CURRENT that names no version (garbage, or removed) says nothing of which snapshot is
    // current; the publication log does (newest first), so its newest good file is served rather
    // than PREVIOUS. With a pointer, the fallback order is PREVIOUS, then any other file.
    const candidates = [
      ...new Set(
        pointed === null
          ? [...readPublications(this.dir).map((p) => p.data_version), ...listSnapshotVersions(this.dir)]
          : [wanted, readPointer(this.dir, 'PREVIOUS'), ...listSnapshotVersions(this.dir)],
      ),
    ].filter((v): v is string => v !== null);
    for (const version of candidates) {
      // Serving a fallback already: only a better candidate (earlier in the list) replaces it.
      if (version === this.current?.version) break;
      const next = await this.open(version);
      if (!next) continue;
      if (this.stopped) {
        next.retire();
        return false;
      }
      const old = this.current;
      this.current = next;
      this.currentStamp = fileStamp(snapshotFile(this.dir, version))?.key ?? null;
      old?.retire();
      this.pinned.drop(version);
      this.problem = null;
      this.report(pointed, candidates.length > 0);
      if (!this.problem) this.log(`serving snapshot ${version}`);
      for (const l of this.listeners) l(next);
      return true;
    }
    this.report(pointed, candidates.length > 0);
    return dropped;
  }

  /** Sets `problem` from what is served and what CURRENT names, and logs it when it changes. */
  private report(pointed: string | null, published: boolean): void {
    const serving = this.current?.version ?? null;
    let problem: string | null = null;
    if (serving && pointed === null)
      problem = `the CURRENT pointer names no snapshot; serving ${serving}, the newest published snapshot that verifies, until \`ri build\` writes the pointer again`;
    else if (serving && pointed !== serving)
      problem = `current snapshot ${pointed} is missing or damaged; serving ${serving} until \`ri build\` rewrites it`;
    else if (!serving && pointed)
      problem = `no readable snapshot: ${pointed} is missing or damaged; run \`ri build\``;
    else if (!serving && published)
      problem =
        'no readable snapshot: the CURRENT pointer names none and no published snapshot verifies; run `ri build`';
    const before = this.problem;
    this.problem = problem;
    if (problem !== null && problem !== before) {
      this.warn(problem);
      if (!serving) for (const l of this.unservable) l();
    }
  }

  /**
   * Opens a snapshot: at once when its pages are checked as they are read (its hash then runs
   * behind), else once its bytes verify. A damaged one is quarantined (or, if it cannot be moved,
   * skipped quietly).
   */
  private async open(version: string): Promise<Snapshot | null> {
    const path = snapshotFile(this.dir, version);
    const stamp = fileStamp(path)?.key;
    if (!stamp || this.rejected.get(version) === stamp) return null;
    const atOnce = servableAtOnce(this.dir, version);
    if (!atOnce && pageChecksums().loaded)
      this.log(`snapshot ${version} has no page checksums: hashing it whole before it is served`);
    if (!atOnce && !(await verifySnapshot(this.dir, version))) {
      this.condemn(version, 'its bytes do not hash to its data_version');
      return null;
    }
    let opened: Snapshot;
    try {
      opened = new Snapshot(version, path, { checkedPages: atOnce });
    } catch (e) {
      // Served at once, so not hashed yet: a page that does not match proves it damaged, and
      // other corruption is confirmed by the hash.
      if (atOnce && (provesDamage(e) || (isCorruption(e) && !(await verifySnapshot(this.dir, version))))) {
        this.condemn(
          version,
          provesDamage(e)
            ? 'a page does not match its checksum'
            : 'its bytes do not hash to its data_version',
        );
        return null;
      }
      this.rejected.set(version, stamp);
      this.warn(`cannot open snapshot ${version}: ${(e as Error).message}`);
      return null;
    }
    if (atOnce) this.hashBehind(opened);
    return opened;
  }

  /**
   * The whole-file hash of a snapshot served at once, after those asked before it: a mismatch
   * sets the snapshot aside and condemns its file, as a page that does not match would.
   */
  private hashBehind(snapshot: Snapshot): void {
    const { version } = snapshot;
    const path = snapshotFile(this.dir, version);
    const signal = this.stopping.signal;
    const job = async () => {
      // Only the file it opened: one changed or rewritten since is the watcher's to check.
      const same = () => !this.stopped && fileStamp(path)?.key === snapshot.file;
      if (!same()) return;
      const started = performance.now();
      let hash: string | null;
      try {
        hash = await fileHash(path, signal);
      } catch (e) {
        if (signal.aborted) return;
        hash = null;
        this.warn(`snapshot ${version} cannot be hashed: ${(e as Error).message}`);
      }
      if (!same()) return;
      if (hash === version) {
        this.log(
          `snapshot ${version}: its whole-file hash matches (${((performance.now() - started) / 1000).toFixed(1)} s)`,
        );
        return;
      }
      if (!this.proven.has(snapshot)) this.proven.set(snapshot, 'its bytes do not hash to its data_version');
      await this.suspect(snapshot);
    };
    this.behind = this.behind
      .then(job)
      .catch((e: Error) => this.warn(`snapshot ${version}: its hash could not be acted on: ${e.message}`));
  }

  /** Resolves once the whole-file hashes asked so far are done, and acted on. */
  hashedBehind(): Promise<void> {
    return this.behind;
  }

  /** The stamp of the file `snapshot` opened, when it was proven damaged. */
  private provenFile(snapshot: Snapshot): string | undefined {
    return this.proven.has(snapshot) ? snapshot.file : undefined;
  }

  /** Sets aside an open snapshot: no answer from it is sent any more, and none kept from it anywhere. */
  private setAside(snapshot: Snapshot): void {
    snapshot.setAside();
    this.forget(snapshot.version);
  }

  /** Tells every cache of answers kept outside the snapshots (onForget) to drop those of `version`. */
  private forget(version: string): void {
    for (const l of this.forgetting) l(version);
  }

  private condemn(version: string, why: string): void {
    this.forget(version);
    const to = quarantineSnapshot(this.dir, version);
    if (to) this.warn(`snapshot ${version} is damaged (${why}): moved to ${to}`);
    else {
      const stamp = fileStamp(snapshotFile(this.dir, version))?.key;
      if (stamp) this.rejected.set(version, stamp);
      this.warn(`snapshot ${version} is damaged (${why}) and could not be moved aside; it is not served`);
    }
  }

  /**
   * The snapshot of `version`, already acquired: the current one, or a kept older one (opened and
   * verified on first use). Null when that version is not kept (pruned, never published, damaged).
   */
  async acquireVersion(version: string): Promise<Snapshot | null> {
    for (;;) {
      const s = this.current?.version === version ? this.current : this.pinned.get(version);
      if (s) {
        s.acquire();
        return s;
      }
      let opening = this.opening.get(version);
      if (!opening) {
        opening = this.openPinned(version).finally(() => this.opening.delete(version));
        this.opening.set(version, opening);
      }
      // Looked up again after the wait: it may have become current, or been closed meanwhile.
      if (!(await opening)) return null;
    }
  }

  private async openPinned(version: string): Promise<Snapshot | null> {
    const opened = await this.open(version);
    const stamp = fileStamp(snapshotFile(this.dir, version))?.key;
    if (!opened || !stamp) {
      opened?.retire();
      return null;
    }
    if (this.current?.version === version) opened.retire();
    else this.pinned.add(opened, stamp);
    return opened;
  }

  /** The versions open for pinned reads (not the current one), least recently used first. */
  pinnedVersions(): string[] {
    return this.pinned.versions();
  }

  onSwitch(listener: (s: Snapshot) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Called with a version whose answers must not be served again from any cache kept outside its
   * snapshot (the MCP answer cache): its file was set aside (damaged, changed in place, suspected)
   * or is no longer kept. Called at once, before the file is checked.
   */
  onForget(listener: (version: string) => void): void {
    this.forgetting.push(listener);
  }

  /**
   * Called when snapshots are published but none can be served (the current one is missing or
   * damaged, and no other is good), once each time it comes to that.
   */
  onUnservable(listener: () => void): void {
    this.unservable.push(listener);
  }

  /** The snapshot a new request should use, already acquired; null when none can be read. */
  acquire(): Snapshot | null {
    const s = this.current;
    s?.acquire();
    return s;
  }

  get version(): string | null {
    return this.current?.version ?? null;
  }

  /**
   * Why no snapshot can be acquired, for the 503 a request gets: a published one being checked or
   * replaced (a damaged file was dropped and the next good one is being verified, or `ri build`
   * is awaited), or none published yet.
   */
  unavailable(): string {
    const published =
      this.running !== null ||
      this.problem !== null ||
      readPointerName(this.dir, 'CURRENT') !== null ||
      listSnapshotVersions(this.dir).length > 0;
    return published
      ? 'The data snapshot is being checked or replaced; try again shortly.'
      : 'No data snapshot is published yet; try again shortly.';
  }

  health(): SnapshotHealth {
    return { serving: this.version, current: readPointerName(this.dir, 'CURRENT'), problem: this.problem };
  }

  stop(): void {
    this.stopped = true;
    this.stopping.abort();
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    this.current?.retire();
    this.current = null;
    this.pinned.clear();
  }
}

/** True for the errors SQLite raises when a database file's pages are damaged. */
export function isCorruption(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return (
    code === 'SQLITE_CORRUPT' ||
    code === 'SQLITE_NOTADB' ||
    code === 'SQLITE_CORRUPT_INDEX' ||
    code === PAGE_CHECKSUM_MISMATCH
  );
}

/** What a read of a page that does not match its checksum fails with (page-checksums.ts). */
const PAGE_CHECKSUM_MISMATCH = 'SQLITE_IOERR_DATA';

/**
 * True for a fault that proves the file damaged, without hashing it: a page that does not match
 * the checksum written with it. (Other corruption SQLite reports is confirmed by the hash first.)
 */
function provesDamage(e: unknown): boolean {
  return (e as { code?: unknown } | null)?.code === PAGE_CHECKSUM_MISMATCH;
}

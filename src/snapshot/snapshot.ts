import type { FSWatcher } from 'node:fs';
import { watch } from 'node:fs';
import Database from 'better-sqlite3';
import { readPointer, snapshotFile } from './publish.js';

/** One open, read-only snapshot. Requests hold it (acquire/release) while they run. */
export class Snapshot {
  readonly db: Database.Database;
  readonly meta: Readonly<Record<string, string>>;
  private holders = 0;
  private retired = false;
  /** Per-snapshot memo for derived answers (e.g. the element list), dropped with the snapshot. */
  readonly memo = new Map<string, unknown>();

  constructor(
    readonly version: string,
    path: string,
  ) {
    this.db = new Database(path, { readonly: true, fileMustExist: true });
    this.db.pragma('cache_size = -65536');
    this.db.pragma('mmap_size = 268435456');
    const rows = this.db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[];
    this.meta = Object.fromEntries(rows.map((r) => [r.key, r.value]));
  }

  acquire(): void {
    this.holders++;
  }

  release(): void {
    this.holders--;
    if (this.retired && this.holders === 0) this.db.close();
  }

  /** Called when a newer snapshot replaces this one: closes once the last request lets go. */
  retire(): void {
    this.retired = true;
    if (this.holders === 0) this.db.close();
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

/**
 * Follows the published CURRENT pointer and swaps to a newly published snapshot without a restart.
 * A request acquires the snapshot that is current when it starts and keeps it to the end, so no
 * request mixes two data versions; the old file is closed when its last request finishes.
 */
export class SnapshotManager {
  private current: Snapshot | null = null;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly listeners: ((s: Snapshot) => void)[] = [];

  constructor(
    readonly dir: string,
    private readonly log: (msg: string) => void = () => {},
  ) {}

  /** Opens the current snapshot (if any) and starts following the pointer. */
  start(pollMs = 1000): void {
    this.refresh();
    try {
      this.watcher = watch(this.dir, () => this.refresh());
      this.watcher.on('error', () => {});
    } catch {
      // The folder may not exist yet; polling picks the first snapshot up.
    }
    this.timer = setInterval(() => this.refresh(), pollMs);
    this.timer.unref();
  }

  /** Re-reads CURRENT and switches if it names another version. Returns true on a switch. */
  refresh(): boolean {
    const version = readPointer(this.dir, 'CURRENT');
    if (!version || version === this.current?.version) return false;
    let next: Snapshot;
    try {
      next = new Snapshot(version, snapshotFile(this.dir, version));
    } catch (e) {
      this.log(`cannot open snapshot ${version}: ${(e as Error).message}`);
      return false;
    }
    const old = this.current;
    this.current = next;
    old?.retire();
    this.log(`serving snapshot ${version}`);
    for (const l of this.listeners) l(next);
    return true;
  }

  onSwitch(listener: (s: Snapshot) => void): void {
    this.listeners.push(listener);
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

  stop(): void {
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
    this.current?.retire();
    this.current = null;
  }
}

/** How many snapshots other than the current one stay open at once for pinned reads. */
const PINNED_OPEN_MAX = 3;

/**
 * The older snapshots opened for reads pinned with data_version, least recently used first. It is
 * bounded because each open snapshot holds a SQLite page cache, a memory map and its response
 * cache: past `max`, the least recently used is retired (closed once its last request lets go).
 * Each is kept with its file's stamp, so the manager can see it pruned or changed. Generic over
 * the snapshot (anything with a version that can be retired), so snapshot.ts imports it one way.
 */
export class PinnedSnapshots<Snapshot extends { readonly version: string; retire(): void }> {
  private readonly open = new Map<string, { snapshot: Snapshot; stamp: string }>();

  constructor(private readonly max = PINNED_OPEN_MAX) {}

  /** The open snapshot of `version`, now the most recently used. */
  get(version: string): Snapshot | undefined {
    const entry = this.open.get(version);
    if (!entry) return undefined;
    this.open.delete(version);
    this.open.set(version, entry);
    return entry.snapshot;
  }

  add(snapshot: Snapshot, stamp: string): void {
    this.drop(snapshot.version);
    this.open.set(snapshot.version, { snapshot, stamp });
    for (const version of this.open.keys()) {
      if (this.open.size <= this.max) break;
      this.drop(version);
    }
  }

  /** Closes the snapshot of `version` (once its last request lets go). */
  drop(version: string): void {
    const entry = this.open.get(version);
    if (!entry) return;
    this.open.delete(version);
    entry.snapshot.retire();
  }

  restamp(version: string, stamp: string): void {
    const entry = this.open.get(version);
    if (entry) entry.stamp = stamp;
  }

  /** Each open version with the stamp its file had when it was opened or last verified. */
  stamps(): [string, string][] {
    return [...this.open].map(([version, e]) => [version, e.stamp]);
  }

  versions(): string[] {
    return [...this.open.keys()];
  }

  clear(): void {
    for (const version of [...this.open.keys()]) this.drop(version);
  }
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isDataVersion } from '../contracts/data-version.js';
import { writeFileAtomically } from '../util/atomic-file.js';

/**
 * The publication log: which snapshots were published, newest first, with when and what they
 * hold. It lives beside the snapshot files (`PUBLISHED`, JSON) because a snapshot's own bytes
 * cannot say when it was published: its name is the hash of its content, and the same content
 * built twice is the same data_version. Pruning keeps the first SNAPSHOTS_KEEP of this order.
 */
export interface Publication {
  data_version: string;
  /** When this version last became the current one (ISO 8601). */
  published_at: string;
  /** The corpus cut-off (the newest publication date it holds), from the snapshot's meta. */
  cutoff_date: string | null;
  /** Works in the corpus the snapshot was scored from, from the snapshot's meta. */
  works: number | null;
}

const LOG = 'PUBLISHED';

function isPublication(p: unknown): p is Publication {
  const x = p as Partial<Publication> | null;
  return isDataVersion(x?.data_version) && typeof x?.published_at === 'string';
}

/** The log, newest first; empty when there is none yet (snapshots published before it existed). */
export function readPublications(dir: string): Publication[] {
  try {
    const parsed: unknown = JSON.parse(readFileSync(join(dir, LOG), 'utf8'));
    return Array.isArray(parsed) ? parsed.filter(isPublication) : [];
  } catch {
    return [];
  }
}

export function writePublications(dir: string, log: Publication[]): void {
  writeFileAtomically(dir, LOG, `${JSON.stringify(log, null, 1)}\n`);
}

/** What the log records of a snapshot file, read from its meta table (nulls when unreadable). */
export function describeSnapshotFile(path: string, version: string, publishedAt: string): Publication {
  let meta: Record<string, string> = {};
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      const rows = db
        .prepare("SELECT key, value FROM meta WHERE key IN ('cutoff_date', 'corpus_papers')")
        .all() as { key: string; value: string }[];
      meta = Object.fromEntries(rows.map((r) => [r.key, r.value]));
    } finally {
      db.close();
    }
  } catch {
    // A file that cannot be read is listed without its cut-off and size.
  }
  return {
    data_version: version,
    published_at: publishedAt,
    cutoff_date: meta.cutoff_date ?? null,
    works: meta.corpus_papers === undefined ? null : Number(meta.corpus_papers),
  };
}

/**
 * The versions to keep: the newest `keep` of those on disk, in publication order (the log first,
 * then files the log does not name, newest file first), and always the CURRENT and PREVIOUS
 * pointers' versions (`ri rollback` needs PREVIOUS).
 */
export function versionsToKeep(
  logOrder: string[],
  filesNewestFirst: string[],
  pointers: (string | null)[],
  keep: number,
): Set<string> {
  const onDisk = new Set(filesNewestFirst);
  const ordered = [...new Set([...logOrder.filter((v) => onDisk.has(v)), ...filesNewestFirst])];
  const kept = new Set(ordered.slice(0, Math.max(1, keep)));
  for (const p of pointers) if (p && onDisk.has(p)) kept.add(p);
  return kept;
}

import type Database from 'better-sqlite3';
import type { SubjectType } from '../scoring/score-entities.js';
import { readPointer, snapshotFile } from '../snapshot/folder.js';
import { servableAtOnce, verifySnapshot } from '../snapshot/integrity.js';
import { CHANGE_CUTOFFS, CHANGE_PUBLICATIONS_KEPT } from '../snapshot/schema.js';

/**
 * What moved between the previous published snapshot and this one, per subject (elements, topics,
 * keywords): written once at publish into the new file (`changes`, `change_publications`), so a
 * pinned data version answers the same and no request compares two files.
 *
 * The file cannot name its own data_version (the hash of its bytes), so its own publication is
 * number 0 with no version; it names the version it was compared with (`since`). The publications
 * of the snapshot it was compared with come after (1, 2, ...: each one's version is then known),
 * up to CHANGE_PUBLICATIONS_KEPT in all, so `since=` can reach back past the versions still kept.
 *
 * The bytes of a snapshot then depend on the one it is compared with, which is the one published
 * in the folder when it is built (`changesBase`): a full build and an update of the same folder
 * compare with the same one, so they give the same bytes and the same data_version. When nothing
 * moved (the same scores as that one: a build of an unchanged corpus), the new file carries that
 * one's changes as they are rather than an empty publication, so building an unchanged corpus
 * again gives the same bytes, and the same version, as the one already published.
 */

/** One subject's state in a snapshot, as the comparison reads it. */
export interface SubjectState {
  type: SubjectType;
  id: string;
  name: string;
  ri: number;
  ris: number;
  hri: number | null;
  /** A topic's community rising (true) or not (false); null for elements and keywords. */
  rising: boolean | null;
}

/** One subject's move between two snapshots; before is null for a new subject, after for one gone. */
export interface SubjectChange {
  type: SubjectType;
  id: string;
  name: string;
  before: { ri: number; ris: number; hri: number | null; rank: number; rising: boolean | null } | null;
  after: { ri: number; ris: number; hri: number | null; rank: number; rising: boolean | null } | null;
}

/**
 * Each subject's rank among its kind: 1 + how many subjects of its type have a higher RIS (equal
 * RIS, equal rank).
 */
export function ranksByRis(states: readonly SubjectState[]): Map<string, number> {
  const byType = new Map<SubjectType, number[]>();
  for (const s of states) {
    const list = byType.get(s.type) ?? [];
    if (list.length === 0) byType.set(s.type, list);
    list.push(s.ris);
  }
  for (const list of byType.values()) list.sort((a, b) => b - a);
  const ranks = new Map<string, number>();
  for (const s of states) {
    const list = byType.get(s.type)!;
    // The first index holding a value not above s.ris: how many are strictly higher.
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid]! > s.ris) lo = mid + 1;
      else hi = mid;
    }
    ranks.set(keyOf(s), lo + 1);
  }
  return ranks;
}

const keyOf = (s: { type: string; id: string }) => `${s.type}\u0000${s.id}`;

/**
 * The subjects that moved from `before` to `after`: RI, RIS, HRI, rank among their kind or a
 * community's rising differ, or the subject is new (or gone). Equal values are the same numbers
 * (the same corpus scores to the same bits), so nothing is compared within a tolerance. In key
 * order (type, then id), as the table is written.
 */
export function diffSubjects(
  before: readonly SubjectState[],
  after: readonly SubjectState[],
): SubjectChange[] {
  const rankBefore = ranksByRis(before);
  const rankAfter = ranksByRis(after);
  const old = new Map(before.map((s) => [keyOf(s), s]));
  const now = new Map(after.map((s) => [keyOf(s), s]));
  const side = (s: SubjectState, ranks: Map<string, number>) => ({
    ri: s.ri,
    ris: s.ris,
    hri: s.hri,
    rank: ranks.get(keyOf(s))!,
    rising: s.rising,
  });
  const out: SubjectChange[] = [];
  for (const s of after) {
    const o = old.get(keyOf(s));
    const a = side(s, rankAfter);
    if (!o) {
      out.push({ type: s.type, id: s.id, name: s.name, before: null, after: a });
      continue;
    }
    const b = side(o, rankBefore);
    if (b.ri !== a.ri || b.ris !== a.ris || b.hri !== a.hri || b.rank !== a.rank || b.rising !== a.rising)
      out.push({ type: s.type, id: s.id, name: s.name, before: b, after: a });
  }
  for (const o of before)
    if (!now.has(keyOf(o)))
      out.push({ type: o.type, id: o.id, name: o.name, before: side(o, rankBefore), after: null });
  const byText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return out.sort((x, y) => byText(x.type, y.type) || byText(x.id, y.id));
}

/** Every subject's state in a snapshot's tables (`schema`: 'main', or an attached file's name). */
function readSubjectStates(db: Database.Database, schema: string): SubjectState[] {
  const rows = db
    .prepare(
      `SELECT s.type, s.id, s.name, s.ri, s.ris, s.hri, c.rising
         FROM ${schema}.subjects s
         LEFT JOIN ${schema}.communities c ON s.type = 'topic' AND c.topic_id = s.id`,
    )
    .all() as (Omit<SubjectState, 'rising'> & { rising: number | null })[];
  return rows.map((r) => ({
    ...r,
    rising: r.type === 'topic' ? r.rising === 1 : null,
  }));
}

/** The snapshot the changes are computed against: its data_version and file. */
export interface ChangesBase {
  version: string;
  file: string;
}

/**
 * The snapshots a build may compare with, first choice first: the current one, then the previous
 * one, when their files are there and sound (page checksums, checked as the pages are read, or
 * else a hash that matches the name). The current one is what every build of the folder finds
 * published; the previous one stands in when the current file is damaged or set aside, which is
 * what the current one was compared with when it was built, so rebuilding it gives its bytes again.
 */
export async function changesBases(dir: string): Promise<ChangesBase[]> {
  const out: ChangesBase[] = [];
  for (const pointer of ['CURRENT', 'PREVIOUS'] as const) {
    const version = readPointer(dir, pointer);
    if (!version || out.some((b) => b.version === version)) continue;
    if (servableAtOnce(dir, version) || (await verifySnapshot(dir, version)))
      out.push({ version, file: snapshotFile(dir, version) });
  }
  return out;
}

/** Whether an attached file has the change tables (schema 10 on). */
function hasChangeTables(db: Database.Database, schema: string): boolean {
  return (
    db
      .prepare(`SELECT count(*) FROM ${schema}.sqlite_master WHERE name = 'change_publications'`)
      .pluck()
      .get() === 1
  );
}

/**
 * Writes the change tables of the snapshot being written (`db`, its subjects and communities
 * already in) against `base`: its own publication and the base's, or, when nothing moved, the
 * base's as they are (see above). Without a base (the first publication of a folder) they stay
 * empty. Returns how many subjects moved in this publication.
 */
export function writeChanges(db: Database.Database, base: ChangesBase | null): number {
  if (!base) return 0;
  db.prepare('ATTACH ? AS base').run(base.file);
  try {
    const moved = diffSubjects(readSubjectStates(db, 'base'), readSubjectStates(db, 'main'));
    const carried = hasChangeTables(db, 'base');
    db.transaction(() => {
      if (moved.length === 0) {
        if (!carried) return;
        const cutoffs = metaValue(db, 'base', CHANGE_CUTOFFS);
        if (cutoffs !== null) db.prepare('INSERT INTO meta VALUES (?, ?)').run(CHANGE_CUTOFFS, cutoffs);
        db.exec(`INSERT INTO change_publications SELECT * FROM base.change_publications ORDER BY publication;
          INSERT INTO changes SELECT * FROM base.changes ORDER BY publication, type, id`);
        return;
      }
      db.prepare('INSERT INTO change_publications VALUES (0, NULL, ?, ?)').run(base.version, moved.length);
      insertChanges(db, moved);
      if (carried) {
        // The base's own publication (0) is named now, by the base's version.
        db.prepare(
          `INSERT INTO change_publications
             SELECT publication + 1, coalesce(version, ?), since, changes FROM base.change_publications
              WHERE publication + 1 < ? ORDER BY publication`,
        ).run(base.version, CHANGE_PUBLICATIONS_KEPT);
        db.prepare(
          `INSERT INTO changes SELECT publication + 1, type, id, name, ri_before, ri_after, ris_before, ris_after,
               hri_before, hri_after, rank_before, rank_after, rising_before, rising_after
             FROM base.changes WHERE publication + 1 < ? ORDER BY publication, type, id`,
        ).run(CHANGE_PUBLICATIONS_KEPT);
      }
      writeCutoffs(db, carried);
    })();
    return moved.length;
  } finally {
    db.exec('DETACH base');
  }
}

function metaValue(db: Database.Database, schema: string, key: string): string | null {
  const value = db.prepare(`SELECT value FROM ${schema}.meta WHERE key = ?`).pluck().get(key);
  return typeof value === 'string' ? value : null;
}

/**
 * The cut-off dates of this snapshot's publications: its own, the base's own, then those the base
 * carried (null for a base built before they were recorded), as many as the publications kept.
 */
function writeCutoffs(db: Database.Database, carried: boolean): void {
  const own = metaValue(db, 'main', 'cutoff_date');
  const dates: (string | null)[] = [own];
  if (carried) {
    const older = JSON.parse(metaValue(db, 'base', CHANGE_CUTOFFS) ?? '[]') as (string | null)[];
    dates.push(metaValue(db, 'base', 'cutoff_date'), ...older.slice(1));
  }
  const kept = db.prepare('SELECT count(*) FROM change_publications').pluck().get() as number;
  while (dates.length < kept) dates.push(null);
  db.prepare('INSERT INTO meta VALUES (?, ?)').run(CHANGE_CUTOFFS, JSON.stringify(dates.slice(0, kept)));
}

/** This publication's rows (publication 0), in key order. */
function insertChanges(db: Database.Database, moved: readonly SubjectChange[]): void {
  const insert = db.prepare('INSERT INTO changes VALUES (0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const flag = (r: boolean | null | undefined) => (r === null || r === undefined ? null : r ? 1 : 0);
  for (const c of moved) {
    const { before: b, after: a } = c;
    insert.run(
      c.type,
      c.id,
      c.name,
      b?.ri ?? null,
      a?.ri ?? null,
      b?.ris ?? null,
      a?.ris ?? null,
      b?.hri ?? null,
      a?.hri ?? null,
      b?.rank ?? null,
      a?.rank ?? null,
      flag(b?.rising),
      flag(a?.rising),
    );
  }
}

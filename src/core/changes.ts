import type { Kind } from '../access/policy.js';
import type { ChangeEntry, ChangesAnswer, SubjectChangesAnswer } from '../contracts/changes.js';
import type { SubjectType } from '../contracts/subjects.js';
import { ELEMENTS } from '../elements/elements.js';
import type {
  ChangePublicationRow,
  ChangeQueries,
  ChangeRow,
  SnapshotView,
  SubjectQueries,
} from '../snapshot/reader.js';
import { mostThatFit, RESULT_TOKENS, withinBudget } from './answer-size.js';
import { answerText } from './answer-text.js';
import { canonicalSymbol } from './elements.js';
import { ServiceError } from './errors.js';
import { findSubject } from './subjects.js';
import { envelope, subjectPath, type Viewer } from './viewer.js';

/**
 * What moved per subject at each publication, as the snapshot recorded it when it was built
 * (snapshot-build/changes.ts): read, filtered and ordered here, never compared anew, so a pinned
 * data version answers the same.
 */

type ChangesView = SnapshotView<ChangeQueries & SubjectQueries>;

/** The filters every changes read takes (contracts/changes.ts: ChangesQuery). */
export interface ChangeFilters {
  since?: string | undefined;
  min_move: number;
  direction?: 'up' | 'down' | undefined;
  limit: number;
}

const CHANGES_NOTES =
  'Each change is one subject at one publication: its RI, RIS, HRI and rank among subjects of its kind ' +
  '(by RIS) in the data version it was compared with (before) and in the one published (after); rising is a ' +
  "topic's research community rising. move is RIS after minus before. RIS is relative to the most-researched " +
  'subject of its kind, so a move can come from that one moving; RI is the share of the last 12 months, which ' +
  'move with the cut-off at each publication. A publication holds what moved since the one published before ' +
  'it, computed once when it was built; a publication in which nothing moved carries the changes of the one ' +
  'before. An answer covers the publications after since, newest first, up to 30.';

/** The publications after `since` that the snapshot holds, own first; unknown_data_version when it reaches none. */
function covered(
  snapshot: ChangesView,
  since: string | undefined,
  whenNotGiven: 'last' | 'all',
): ChangePublicationRow[] {
  const publications = snapshot.reader.changePublications();
  if (since === undefined) return whenNotGiven === 'all' ? publications : publications.slice(0, 1);
  if (since === snapshot.version) return [];
  const at = publications.findIndex((p) => p.since === since);
  if (at >= 0) return publications.slice(0, at + 1);
  const reach =
    publications.length === 0
      ? `Data version ${snapshot.version} holds no changes: it is the first published where it was built, or was built before changes were recorded.`
      : `Data version ${snapshot.version} holds the changes since ${publications.at(-1)!.since} (${publications.length} publication${publications.length === 1 ? '' : 's'}: since= takes any of ${[snapshot.version, ...publications.map((p) => p.since)].join(', ')}).`;
  throw new ServiceError(
    'unknown_data_version',
    `since=${since} is not a data version these changes follow. ${reach}`,
    {
      parameter: 'since',
    },
  );
}

/** A change row as an answer gives it: HRI as the viewer may see it, its direction and move. */
function entry(
  row: ChangeRow,
  publication: ChangePublicationRow,
  version: string,
  viewer: Viewer,
): ChangeEntry {
  const change = row.ris_before === null ? 'new' : row.ris_after === null ? 'gone' : 'moved';
  const move = Math.round(((row.ris_after ?? 0) - (row.ris_before ?? 0)) * 1e6) / 1e6;
  const flag = (v: number | null) => (v === null ? null : v === 1);
  const rising = { before: flag(row.rising_before), after: flag(row.rising_after) };
  const turned = rising.before !== null && rising.after !== null && rising.before !== rising.after;
  const direction =
    change === 'new'
      ? 'up'
      : change === 'gone'
        ? 'down'
        : move > 0
          ? 'up'
          : move < 0
            ? 'down'
            : turned
              ? rising.after
                ? 'up'
                : 'down'
              : 'none';
  const hri = (v: number | null) => (viewer.hriAvailable ? v : null);
  return {
    subject_type: row.type,
    subject_id: row.id,
    name: row.name,
    data_version: publication.version ?? version,
    since: publication.since,
    change,
    direction,
    move,
    ri: { before: row.ri_before, after: row.ri_after },
    ris: { before: row.ris_before, after: row.ris_after },
    hri: { before: hri(row.hri_before), after: hri(row.hri_after) },
    rank: { before: row.rank_before, after: row.rank_after },
    rising,
    canonical_url: `${viewer.publicUrl}${row.type === 'element' ? `/elements/${row.id}` : subjectPath(row.type, row.id)}`,
  };
}

/**
 * The entries of `rows` that pass the filters, newest publication first, then the largest moves
 * (then by kind and id). A subject new or gone, or a community turning, passes min_move.
 */
function filtered(
  snapshot: ChangesView,
  rows: readonly ChangeRow[],
  publications: readonly ChangePublicationRow[],
  filters: ChangeFilters,
  viewer: Viewer,
): ChangeEntry[] {
  const out: ChangeEntry[] = [];
  for (const row of rows) {
    const publication = publications[row.publication];
    if (!publication) continue;
    const e = entry(row, publication, snapshot.version, viewer);
    if (filters.direction && e.direction !== filters.direction) continue;
    const event = e.change !== 'moved' || e.rising.before !== e.rising.after;
    if (!event && Math.abs(e.move) < filters.min_move) continue;
    out.push(e);
  }
  const at = new Map(publications.map((p, i) => [p.version ?? snapshot.version, i]));
  const byText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
  return out.sort(
    (a, b) =>
      at.get(a.data_version)! - at.get(b.data_version)! ||
      Math.abs(b.move) - Math.abs(a.move) ||
      byText(a.subject_type, b.subject_type) ||
      byText(a.subject_id, b.subject_id),
  );
}

/** The fields every changes answer shares. */
function listed(
  snapshot: ChangesView,
  publications: readonly ChangePublicationRow[],
  entries: readonly ChangeEntry[],
  filters: ChangeFilters,
) {
  return {
    since: filters.since ?? null,
    publications: publications.map((p) => ({
      data_version: p.version ?? snapshot.version,
      since: p.since,
      changes: p.changes,
    })),
    min_move: filters.min_move,
    direction: filters.direction ?? null,
    limit: filters.limit,
    total: entries.length,
    changes: entries.slice(0, filters.limit),
  };
}

/** Why a changes list is empty. */
const emptyWhy = (publications: readonly unknown[]) => () =>
  publications.length === 0
    ? 'changes is empty: no publication is covered (since names the data version answering, or it holds no changes).'
    : 'changes is empty: nothing moved that passes the filters in the publications covered.';

/** GET /v1/changes: what moved of these kinds at each publication after `since` (the last one when not given). */
export function listChanges(
  snapshot: ChangesView,
  kinds: readonly Kind[],
  filters: ChangeFilters,
  viewer: Viewer,
): ChangesAnswer {
  const publications = covered(snapshot, filters.since, 'last');
  const rows = snapshot.reader.changeRows(publications.length - 1, { types: kinds });
  const entries = filtered(snapshot, rows, publications, filters, viewer);
  const answer = listed(snapshot, publications, entries, filters);
  return {
    kind: [...kinds],
    ...answer,
    ...envelope(snapshot, viewer, '/docs', { changes: CHANGES_NOTES }, [
      [answer.changes, emptyWhy(publications)],
    ]),
  };
}

/** One element's or subject's changes at each publication after `since` (every one held when not given). */
function oneSubject(
  snapshot: ChangesView,
  type: Kind,
  id: string,
  name: string,
  filters: ChangeFilters,
  viewer: Viewer,
): SubjectChangesAnswer {
  const publications = covered(snapshot, filters.since, 'all');
  const rows = snapshot.reader.changeRows(publications.length - 1, { type, id });
  const entries = filtered(snapshot, rows, publications, filters, viewer);
  const answer = listed(snapshot, publications, entries, filters);
  const path = type === 'element' ? `/elements/${id}` : subjectPath(type, id);
  return {
    subject_type: type,
    subject_id: id,
    name,
    ...answer,
    ...envelope(snapshot, viewer, path, { changes: CHANGES_NOTES }, [
      [answer.changes, emptyWhy(publications)],
    ]),
  };
}

/** GET /v1/elements/{symbol}/changes. */
export function elementChanges(
  snapshot: ChangesView,
  symbol: string,
  filters: ChangeFilters,
  viewer: Viewer,
): SubjectChangesAnswer {
  const canonical = canonicalSymbol(symbol);
  const name = ELEMENTS.find((e) => e.symbol === canonical)!.name;
  return oneSubject(snapshot, 'element', canonical, name, filters, viewer);
}

/**
 * GET /v1/subjects/{type}/{id}/changes. A subject gone from the corpus is still found by its
 * changes (in the form they name it).
 */
export function subjectChanges(
  snapshot: ChangesView,
  type: SubjectType,
  id: string,
  filters: ChangeFilters,
  viewer: Viewer,
): SubjectChangesAnswer {
  const gone = snapshot.reader
    .changeRows(Number.MAX_SAFE_INTEGER, { type, id })
    .find((r) => r.ris_after === null);
  const name = gone && !snapshot.reader.subject(type, id) ? gone.name : undefined;
  if (name !== undefined) return oneSubject(snapshot, type, id, name, filters, viewer);
  const row = findSubject(snapshot, type, id);
  return oneSubject(snapshot, type, row.id, row.name, filters, viewer);
}

/**
 * A changes answer held to an MCP result's size: its first changes that fit, and what is left
 * out, with the URL of the whole answer.
 */
export function fitChanges<T extends ChangesAnswer | SubjectChangesAnswer>(
  answer: T,
  whole: string,
  budget = RESULT_TOKENS,
): T {
  const listedCount = answer.changes.length;
  const fits = (a: T) => withinBudget(answerText(a), budget);
  if (listedCount <= 1 || fits(answer)) return answer;
  const first = (kept: number): T => ({
    ...answer,
    changes: answer.changes.slice(0, kept),
    notes: {
      ...answer.notes,
      left_out:
        `Changes ${kept + 1} to ${listedCount} of the ${listedCount} listed (total ${answer.total}) are left out: a ` +
        `result holds about ${budget.toLocaleString('en-US')} tokens and keeps the first changes that fit (the newest ` +
        `publication, the largest moves). Narrow the call with ${'kind' in answer ? 'kind' : 'since'}, min_move or direction, or read the whole answer: ${whole}.`,
    },
  });
  return first(mostThatFit(1, listedCount - 1, (n) => fits(first(n))));
}

import type {
  SubjectAnswer,
  SubjectElementsAnswer,
  SubjectSearchAnswer,
  SubjectType,
} from '../contracts/subjects.js';

import { ELEMENTS } from '../elements/elements.js';
import type { SnapshotView, SubjectHit, SubjectQueries, SubjectRow } from '../snapshot/reader.js';
import { ServiceError } from './errors.js';
import { STOP_WORDS } from './research/question.js';
import { envelope, type Viewer } from './viewer.js';

export type { SubjectType } from '../contracts/subjects.js';

type SubjectsView = SnapshotView<SubjectQueries>;

/**
 * A topic id as stored (T10074): accepts t10074, 10074 and the OpenAlex URL. The id arrives
 * decoded once (by the router, or as a tool argument): it is never decoded again, so '%' is just
 * a character of an unknown id.
 */
function normaliseId(type: SubjectType, id: string): string {
  const trimmed = id.trim();
  if (type === 'topic') {
    const m = /(?:^|\/)T?(\d+)$/i.exec(trimmed);
    return m ? `T${m[1]}` : trimmed;
  }
  return trimmed.toLowerCase();
}

/** A subject by type and id, or 404 unknown_subject with the nearest names as suggestions. */
export function findSubject(snapshot: SubjectsView, type: SubjectType, id: string): SubjectRow {
  const canonical = normaliseId(type, id);
  const row = snapshot.reader.subject(type, canonical);
  if (!row) {
    const suggestions = searchRows(snapshot, id.replace(/[-_]/g, ' '), 3).map((r) => ({
      subject_type: r.type,
      subject_id: r.id,
      name: r.name,
    }));
    throw new ServiceError('unknown_subject', `No ${type} with id '${id}' in this data.`, { suggestions });
  }
  return row;
}

export function getSubject(
  snapshot: SubjectsView,
  type: SubjectType,
  id: string,
  viewer: Viewer,
): SubjectAnswer {
  const row = findSubject(snapshot, type, id);
  const extra = JSON.parse(row.extra) as {
    field?: string | null;
    subfield?: string | null;
    domain?: string | null;
  };
  return {
    subject_type: type,
    subject_id: row.id,
    name: row.name,
    description: row.description,
    ri: row.ri,
    ris: row.ris,
    hri: viewer.hriAvailable ? row.hri : null,
    paper_count: row.paper_count,
    ...(type === 'topic'
      ? { field: extra.field ?? null, subfield: extra.subfield ?? null, domain: extra.domain ?? null }
      : {}),
    ...envelope(snapshot, viewer, `/subjects/${type}/${row.id}`),
  };
}

/** The top 10 elements a subject is routed to; a subject with no element link is a 404. */
export function subjectElements(
  snapshot: SubjectsView,
  type: SubjectType,
  id: string,
  viewer: Viewer,
): SubjectElementsAnswer {
  const row = findSubject(snapshot, type, id);
  const routed = snapshot.reader.routedElements(type, row.id);
  if (routed.length === 0) {
    throw new ServiceError(
      'unknown_subject',
      `The ${type} '${row.id}' (${row.name}) has no paper that names an element.`,
      {
        reason: 'no_element_links',
      },
    );
  }
  const names = new Map(ELEMENTS.map((e) => [e.symbol, e.name]));
  return {
    subject_type: type,
    subject_id: row.id,
    name: row.name,
    elements: routed.map((r) => ({
      rank: r.rank,
      symbol: r.symbol,
      name: names.get(r.symbol) ?? r.symbol,
      share: r.share,
      canonical_url: `${viewer.publicUrl}/elements/${r.symbol}`,
    })),
    ...envelope(snapshot, viewer, `/subjects/${type}/${row.id}`, { papers: SUBJECT_SHARE_NOTES }),
  };
}

/** How a subject's elements' share is read. */
export const SUBJECT_SHARE_NOTES =
  "share: the subject's papers' weight on each element (fractional papers), as a share of the total over all elements.";

/** Words of a query, lower case, without FTS syntax; glue words left out unless nothing else is there. */
function words(q: string): string[] {
  const all = q
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
  const content = all.filter((w) => !STOP_WORDS.has(w));
  return [...new Set(content.length > 0 ? content : all)].slice(0, 12);
}

/** Subjects read per question before they are ranked by how much of it they cover. */
const CANDIDATES = 200;

interface RankedHit extends SubjectHit {
  /** The question's words its name or description holds (stemmed), and those in its name. */
  covered: number;
  inName: number;
}

/**
 * Subjects ranked by how much of the question they cover: the share of its words (rarer words
 * weigh more) their name or description holds, then how many are in the name, then bm25. A
 * several-word question is never answered by the subjects that carry one generic word of it
 * before one that carries them all.
 */
function searchRows(snapshot: SubjectsView, q: string, limit: number): RankedHit[] {
  const terms = words(q);
  if (terms.length === 0) return [];
  const { reader } = snapshot;
  const quoted = terms.map((t) => `"${t}"`);
  const found = new Map<string, SubjectHit>();
  for (const hit of [
    ...reader.searchSubjects(quoted.join(' AND '), limit),
    ...reader.searchSubjects(quoted.join(' OR '), CANDIDATES),
  ])
    if (!found.has(hit.id)) found.set(hit.id, hit);
  const ids = [...found.keys()];
  const coverage = new Map<string, number>();
  const inName = new Map<string, number>();
  let whole = 0;
  for (const t of quoted) {
    // A word's weight: rarer among the subjects' texts, more telling.
    const weight = 1 / Math.log(2 + reader.countSubjectMatches(t, 100_000));
    whole += weight;
    for (const id of reader.subjectsMatching(t, ids)) coverage.set(id, (coverage.get(id) ?? 0) + weight);
    for (const id of reader.subjectsMatching(`{name} : ${t}`, ids)) inName.set(id, (inName.get(id) ?? 0) + 1);
  }
  return [...found.values()]
    .map((hit) => ({ ...hit, covered: (coverage.get(hit.id) ?? 0) / whole, inName: inName.get(hit.id) ?? 0 }))
    .sort(
      (a, b) =>
        b.covered - a.covered ||
        b.inName - a.inName ||
        a.score - b.score ||
        b.paper_count - a.paper_count ||
        a.id.localeCompare(b.id),
    )
    .slice(0, limit);
}

/** Resolves free text to ranked topic and keyword candidates, each with why it matched. */
export function searchSubjects(snapshot: SubjectsView, q: string, viewer: Viewer): SubjectSearchAnswer {
  const terms = words(q);
  if (terms.length === 0) {
    throw new ServiceError('invalid_parameter', "Parameter 'q': give at least one word to search for.", {
      parameter: 'q',
    });
  }
  const rows = searchRows(snapshot, q, 20);
  const results = rows.map((r) => {
    const name = r.name.toLowerCase();
    const inName = terms.filter((t) => name.includes(t.replace(/s$/, '')));
    const match =
      name === terms.join(' ')
        ? 'exact name'
        : r.covered < 0.999
          ? `name or description holds ${Math.round(r.covered * 100)}% of the question (rarer words weigh more)`
          : inName.length === terms.length
            ? 'name contains every word'
            : inName.length > 0
              ? `name contains ${inName.map((t) => `'${t}'`).join(', ')}; description matches the rest`
              : 'description matches every word';
    return {
      subject_type: r.type,
      subject_id: r.id,
      name: r.name,
      paper_count: r.paper_count,
      match,
      canonical_url: `${viewer.publicUrl}/subjects/${r.type}/${r.id}`,
    };
  });
  return { q, results, ...envelope(snapshot, viewer, `/subjects/search?q=${encodeURIComponent(q)}`) };
}

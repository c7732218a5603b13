import type {
  SubjectAnswer,
  SubjectElementsAnswer,
  SubjectSearchAnswer,
  SubjectType,
} from '../contracts/subjects.js';

import { ELEMENTS } from '../elements/elements.js';
import type { SnapshotView, SubjectHit, SubjectQueries, SubjectRow } from '../snapshot/reader.js';
import { ServiceError } from './errors.js';
import { STOP_WORDS, termGroups } from './research/question.js';
import { questionTopicFits, type TopicModelQueries } from './research/topic-model.js';
import { envelope, subjectPath, type Viewer } from './viewer.js';

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
    ...envelope(snapshot, viewer, subjectPath(type, row.id)),
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
    ...envelope(snapshot, viewer, subjectPath(type, row.id), { papers: SUBJECT_SHARE_NOTES }),
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

/** Subjects read per question before they are ranked by how well it fits them. */
const CANDIDATES = 200;
/** A subject's texts: the share of the question they hold, to this power (a part held weighs little). */
const TEXT_POW = 3;
/** Weight of a topic's share of the question by the titles' topic model, beside its texts' (1). */
const MODEL_WEIGHT = 0.5;
/** Topics the topic model names that are read as candidates (the largest shares, from MODEL_LEAST). */
const MODEL_TOPICS = 10;
const MODEL_LEAST = 0.01;
/** The topic model's share from which a topic's match names it (it always does when nothing else matched). */
const MODEL_SAID = 0.05;

interface RankedHit extends SubjectHit {
  /** The share of the question (rarer words weigh more) its name or description holds, 0..1. */
  covered: number;
  /** The question's words its name holds (as the text index reads them: whole words, stemmed). */
  inName: number;
  /** Which of them: the question's words its name holds. */
  nameWords: string[];
  /** Its name is the question: it holds every word of it and no other. */
  named: boolean;
  /** A topic's share of the question by the titles' topic model, 0..1 (a keyword: 0). */
  model: number;
  /** How well the question fits it: covered^TEXT_POW + MODEL_WEIGHT x model. */
  fit: number;
}

/**
 * Subjects ranked by how well the question fits them: a subject whose name is the question
 * first; then by the share of the question (rarer words weigh more) their name or description
 * holds, cubed, plus half a topic's share of the question by the titles' topic model (what the
 * corpus's titles teach of their communities: a shortened title rarely names its topic, but its
 * words are that topic's titles' words), counted for the topics whose titles use the question's
 * words more than the corpus's do; then words in the name, then bm25. A several-word
 * question is never answered by the subjects that carry one generic word of it before one that
 * carries them all. Without `model` (suggestions for an unknown id), by the texts alone.
 */
function searchRows(
  snapshot: SubjectsView,
  q: string,
  limit: number,
  model?: TopicModelQueries,
): RankedHit[] {
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
  // The topics' shares by the topic model (a few key reads); its leading topics are candidates
  // too, read by id when their texts hold none of the question.
  const shares = new Map<string, number>();
  if (model) {
    // Only the topics whose titles use the question's words more than the corpus's titles do: a
    // share the model gives a topic for its size alone is no evidence that the question fits it.
    const byTopic = [...questionTopicFits(model, termGroups(q))]
      .filter(([, fit]) => fit.lift > 0)
      .map(([topic, fit]) => [topic, fit.share] as const)
      .sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    byTopic.forEach(([topic, share], i) => {
      const id = `T${topic}`;
      shares.set(id, share);
      if (found.has(id) || i >= MODEL_TOPICS || share < MODEL_LEAST) return;
      const row = reader.subject('topic', id);
      if (row) found.set(id, { type: 'topic', id, name: row.name, paper_count: row.paper_count, score: 0 });
    });
  }
  const ids = [...found.keys()];
  const coverage = new Map<string, number>();
  const inName = new Map<string, string[]>();
  let whole = 0;
  quoted.forEach((t, i) => {
    // A word's weight: rarer among the subjects' texts, more telling.
    const weight = 1 / Math.log(2 + reader.countSubjectMatches(t, 100_000));
    whole += weight;
    for (const id of reader.subjectsMatching(t, ids)) coverage.set(id, (coverage.get(id) ?? 0) + weight);
    for (const id of reader.subjectsMatching(`{name} : ${t}`, ids))
      inName.set(id, [...(inName.get(id) ?? []), terms[i]!]);
  });
  return [...found.values()]
    .map((hit) => {
      const covered = (coverage.get(hit.id) ?? 0) / whole;
      const nameWords = inName.get(hit.id) ?? [];
      const held = nameWords.length;
      const share = hit.type === 'topic' ? (shares.get(hit.id) ?? 0) : 0;
      return {
        ...hit,
        covered,
        inName: held,
        nameWords,
        named: held === terms.length && words(hit.name).length === terms.length,
        model: share,
        fit: covered ** TEXT_POW + MODEL_WEIGHT * share,
      };
    })
    .sort(
      (a, b) =>
        Number(b.named) - Number(a.named) ||
        b.fit - a.fit ||
        b.inName - a.inName ||
        a.score - b.score ||
        b.paper_count - a.paper_count ||
        a.id.localeCompare(b.id),
    )
    .slice(0, limit);
}

/**
 * Why a subject matched: its name or texts, and for a topic its titles by the topic model. The
 * words said to be in its name are the ones the text index found there as words (not inside
 * another word: 'iron' is not in 'Environmental'); one found by its stem is named with the word
 * that holds it ('oxide' as 'oxidation'), so the reason never claims more than matched.
 */
function matchOf(r: RankedHit, terms: string[]): string {
  const name = r.name.toLowerCase();
  const nameWords = name.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
  const asWritten = (t: string) =>
    nameWords.some((w) => w === t || w === `${t}s` || `${w}s` === t || w === `${t}es` || `${w}es` === t);
  const said = (t: string) => {
    if (asWritten(t)) return `'${t}'`;
    const near = nameWords
      .map((w) => ({ w, shared: commonPrefix(w, t) }))
      .filter((x) => x.shared >= 3)
      .sort((a, b) => b.shared - a.shared)[0];
    return near ? `'${t}' (as '${near.w}')` : `'${t}'`;
  };
  const inName = r.nameWords;
  const written = inName.every(asWritten);
  const text =
    r.covered <= 0
      ? null
      : r.named && written
        ? name === terms.join(' ')
          ? 'exact name'
          : 'name is the question (its words, no other)'
        : r.covered < 0.999
          ? `name or description holds ${Math.round(r.covered * 100)}% of the question (rarer words weigh more)`
          : inName.length === terms.length
            ? written
              ? 'name contains every word'
              : `name contains ${inName.map(said).join(', ')}`
            : inName.length > 0
              ? `name contains ${inName.map(said).join(', ')}; description matches the rest`
              : 'description matches every word';
  const model =
    r.model >= MODEL_SAID || (text === null && r.model > 0)
      ? `titles on this topic use the question's words more than the corpus's titles do (${Math.round(r.model * 100)}% of the question by the titles' topic model)`
      : null;
  return [text, model].filter((m) => m !== null).join('; ');
}

/** How many leading characters two words share. */
function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** Resolves free text to ranked topic and keyword candidates, each with why it matched. */
export function searchSubjects(
  snapshot: SnapshotView<SubjectQueries & TopicModelQueries>,
  q: string,
  viewer: Viewer,
): SubjectSearchAnswer {
  const terms = words(q);
  if (terms.length === 0) {
    throw new ServiceError('invalid_parameter', "Parameter 'q': give at least one word to search for.", {
      parameter: 'q',
    });
  }
  const rows = searchRows(snapshot, q, 20, snapshot.reader);
  const results = rows.map((r) => {
    const match = matchOf(r, terms);
    return {
      subject_type: r.type,
      subject_id: r.id,
      name: r.name,
      paper_count: r.paper_count,
      match,
      canonical_url: `${viewer.publicUrl}${subjectPath(r.type, r.id)}`,
    };
  });
  const whyEmpty = () =>
    `results is empty: no topic or keyword name or description holds a word of '${q}' (${terms.join(', ')}), ` +
    "and no topic's titles use its words more than the corpus's titles do.";
  return {
    q,
    results,
    ...envelope(snapshot, viewer, `/subjects/search?q=${encodeURIComponent(q)}`, {}, [[results, whyEmpty]]),
  };
}

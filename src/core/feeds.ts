import type { Kind } from '../access/policy.js';
import type { ChangeEntry, SubjectChangesAnswer } from '../contracts/changes.js';
import { MAX_FEED_SUBJECTS } from '../contracts/feeds.js';
import type { SubjectType } from '../contracts/subjects.js';
import type { ChangeQueries, SnapshotView, SubjectQueries } from '../snapshot/reader.js';
import { CHANGE_CUTOFFS } from '../snapshot/schema.js';
import { type ChangeFilters, elementChanges, listChanges, subjectChanges } from './changes.js';
import { canonicalSymbol } from './elements.js';
import { ServiceError } from './errors.js';
import { subjectPath, type Viewer } from './viewer.js';

/**
 * Feeds of the changes (core/changes.ts), as a feed reader takes them: one entry per publication
 * and subject, each the change the changes endpoints answer. Made of the same answers, so a feed
 * and /v1/changes cannot disagree; what is added is what a feed needs: an id that stays the same
 * for the same change in every answer that lists it (the data version and the subject, never the
 * answering snapshot or the caller), a date and a page to open. The Atom form is the front
 * door's (http/routes/feeds/atom.ts).
 */

type ChangesView = SnapshotView<ChangeQueries & SubjectQueries>;

/** The entries a feed lists at most, newest publication first. */
const FEED_ENTRIES = 200;
/** The rises a "rose most" feed lists per publication. */
const RISING_PER_PUBLICATION = 10;

/**
 * The year in the feeds' tag: URIs (RFC 4151): a date at which the service's host named them,
 * fixed so that an id never changes.
 */
const TAG_YEAR = '2026';

interface FeedEntry {
  /** tag:<host>,2026:<data_version>/<type>/<id>: the same change has the same id in every feed. */
  id: string;
  title: string;
  /** The page of the subject (a search for its name when it is gone from the corpus). */
  link: string;
  /** The cut-off date of the publication it came with (ISO 8601). */
  updated: string;
  change: ChangeEntry;
}

export interface FeedAnswer {
  id: string;
  title: string;
  subtitle: string;
  /** The page the feed follows. */
  link: string;
  updated: string;
  entries: FeedEntry[];
  data_version: string;
}

/** Every change held, as the changes endpoints filter nothing out. */
const EVERY_CHANGE: ChangeFilters = { min_move: 0, limit: Number.MAX_SAFE_INTEGER };

/** The tag: URI authority, the public host (a tag names its authority by a DNS name). */
function tagOf(viewer: Viewer, specific: string): string {
  return `tag:${new URL(viewer.publicUrl).hostname},${TAG_YEAR}:${specific}`;
}

/**
 * Each publication's date by data version: its corpus cut-off as the build recorded it
 * (snapshot/schema.ts CHANGE_CUTOFFS). A publication built before they were recorded takes the
 * date of the one after it (never a clock time, so an answer is the same every time it is made).
 */
function publicationDates(snapshot: ChangesView): Map<string, string> {
  return snapshot.memoize('feeds:dates', () => {
    let recorded: (string | null)[] = [];
    try {
      recorded = JSON.parse(snapshot.meta[CHANGE_CUTOFFS] ?? '[]') as (string | null)[];
    } catch {
      // Not readable: every date falls back below.
    }
    const dates = new Map<string, string>();
    let last = snapshot.meta.cutoff_date ?? '1970-01-01';
    for (const p of snapshot.reader.changePublications()) {
      last = recorded[p.publication] ?? last;
      dates.set(p.version ?? snapshot.version, `${last}T00:00:00Z`);
    }
    return dates;
  });
}

const one = (v: number | null) => (v === null ? '–' : v.toFixed(1));
const signed = (v: number) => `${v > 0 ? '+' : ''}${v.toFixed(1)}`;

/** What happened, in a line: the subject and its RIS (or what else moved). */
function entryTitle(c: ChangeEntry): string {
  const who = c.subject_type === 'element' ? `${c.name} (${c.subject_id})` : c.name;
  if (c.change === 'new') return `${who}: new, RIS ${one(c.ris.after)}`;
  if (c.change === 'gone') return `${who}: gone from the corpus (RIS was ${one(c.ris.before)})`;
  const turned =
    c.rising.before !== c.rising.after && c.rising.after !== null
      ? c.rising.after
        ? ', its community now rising'
        : ', its community no longer rising'
      : '';
  if (c.move !== 0)
    return `${who}: RIS ${one(c.ris.before)} → ${one(c.ris.after)} (${signed(c.move)})${turned}`;
  return `${who}: RIS ${one(c.ris.after)} unchanged, RI ${one(c.ri.before)} → ${one(c.ri.after)}${turned}`;
}

/** A subject gone from the corpus has no page: a search for its name stands for it. */
const searchFor = (viewer: Viewer, name: string) =>
  `${viewer.publicUrl}/subjects/search?${new URLSearchParams({ q: name })}`;

function entryOf(c: ChangeEntry, dates: Map<string, string>, viewer: Viewer): FeedEntry {
  const gone = c.change === 'gone' && c.subject_type !== 'element';
  return {
    id: tagOf(viewer, `${c.data_version}/${c.subject_type}/${encodeURIComponent(c.subject_id)}`),
    title: entryTitle(c),
    link: gone ? searchFor(viewer, c.name) : c.canonical_url,
    updated: dates.get(c.data_version)!,
    change: c,
  };
}

/** A feed of these changes (already in the changes' order), at most FEED_ENTRIES. */
function feedOf(
  snapshot: ChangesView,
  changes: readonly ChangeEntry[],
  viewer: Viewer,
  head: Pick<FeedAnswer, 'title' | 'subtitle' | 'link'> & { tag: string },
): FeedAnswer {
  const dates = publicationDates(snapshot);
  const entries = changes.slice(0, FEED_ENTRIES).map((c) => entryOf(c, dates, viewer));
  const newest = [...dates.values()][0] ?? `${snapshot.meta.cutoff_date ?? '1970-01-01'}T00:00:00Z`;
  return {
    id: tagOf(viewer, head.tag),
    title: head.title,
    subtitle: head.subtitle,
    link: head.link,
    // The latest entry's date (ISO strings sort as dates).
    updated:
      entries
        .map((e) => e.updated)
        .sort()
        .at(-1) ?? newest,
    entries,
    data_version: snapshot.version,
  };
}

const SUBTITLE =
  'What moved at each publication of the data: RI, RIS, HRI and rank before and after, as /v1/changes answers them.';

function subjectFeed(snapshot: ChangesView, answer: SubjectChangesAnswer, viewer: Viewer, tag: string) {
  const gone = answer.changes[0]?.change === 'gone' && answer.subject_type !== 'element';
  return feedOf(snapshot, answer.changes, viewer, {
    tag,
    title: `${answer.subject_type === 'element' ? `${answer.name} (${answer.subject_id})` : answer.name}: changes in research intensity`,
    subtitle: SUBTITLE,
    link: gone ? searchFor(viewer, answer.name) : answer.canonical_url,
  });
}

/** GET /v1/feeds/elements/{symbol}: the element's changes at every publication held. */
export function elementFeed(snapshot: ChangesView, symbol: string, viewer: Viewer): FeedAnswer {
  const answer = elementChanges(snapshot, symbol, EVERY_CHANGE, viewer);
  return subjectFeed(snapshot, answer, viewer, `feeds/elements/${answer.subject_id}`);
}

/** GET /v1/feeds/subjects/{type}/{id}: a topic's or keyword's changes at every publication held. */
export function topicFeed(snapshot: ChangesView, type: SubjectType, id: string, viewer: Viewer): FeedAnswer {
  const answer = subjectChanges(snapshot, type, id, EVERY_CHANGE, viewer);
  return subjectFeed(snapshot, answer, viewer, `feeds${subjectPath(answer.subject_type, answer.subject_id)}`);
}

/** A subject a set feed names. */
export interface FeedSubject {
  type: Kind;
  id: string;
}

/**
 * GET /v1/feeds/subjects?subjects=...: the changes of a set of subjects named in the URL, newest
 * publication first, then the largest moves. The set is the URL (the simplest one a reader can
 * keep: no state to save or share); its id is the set's canonical form, whatever the order.
 */
export function subjectSetFeed(
  snapshot: ChangesView,
  subjects: readonly FeedSubject[],
  viewer: Viewer,
): FeedAnswer {
  if (subjects.length > MAX_FEED_SUBJECTS)
    throw new ServiceError('invalid_parameter', `subjects names at most ${MAX_FEED_SUBJECTS} subjects.`, {
      parameter: 'subjects',
    });
  const answers = subjects.map((s) =>
    s.type === 'element'
      ? elementChanges(snapshot, s.id, EVERY_CHANGE, viewer)
      : subjectChanges(snapshot, s.type, s.id, EVERY_CHANGE, viewer),
  );
  const keys = [...new Set(answers.map((a) => `${a.subject_type}/${a.subject_id}`))].sort();
  const order = new Map(
    snapshot.reader.changePublications().map((p, i) => [p.version ?? snapshot.version, i]),
  );
  const seen = new Set<string>();
  const changes = answers
    .flatMap((a) => a.changes)
    .filter((c) => {
      // A subject named twice (Fe and fe) is listed once.
      const key = `${c.data_version}/${c.subject_type}/${c.subject_id}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort(
      (a, b) =>
        order.get(a.data_version)! - order.get(b.data_version)! ||
        Math.abs(b.move) - Math.abs(a.move) ||
        (a.subject_type < b.subject_type ? -1 : a.subject_type > b.subject_type ? 1 : 0) ||
        (a.subject_id < b.subject_id ? -1 : a.subject_id > b.subject_id ? 1 : 0),
    );
  const names = [
    ...new Map(
      answers.map((a) => [
        `${a.subject_type}/${a.subject_id}`,
        a.subject_type === 'element' ? a.subject_id : a.name,
      ]),
    ),
  ]
    .sort(([x], [y]) => (x < y ? -1 : 1))
    .map(([, name]) => name);
  return feedOf(snapshot, changes, viewer, {
    tag: `feeds/subjects?subjects=${keys.map(encodeURIComponent).join(',')}`,
    title: `Changes in research intensity: ${names.join(', ')}`,
    subtitle: SUBTITLE,
    link: `${viewer.publicUrl}/`,
  });
}

/** GET /v1/feeds/rising?kind=: at each publication held, the subjects of a kind whose RIS rose most. */
export function risingFeed(snapshot: ChangesView, kind: Kind, viewer: Viewer): FeedAnswer {
  const publications = snapshot.reader.changePublications();
  const since = publications.at(-1)?.since;
  const ups =
    since === undefined
      ? []
      : listChanges(snapshot, [kind], { ...EVERY_CHANGE, since, direction: 'up' }, viewer).changes;
  // Already newest publication first, then the largest moves: the first of each publication.
  const taken = new Map<string, number>();
  const top = ups.filter((c) => {
    const n = taken.get(c.data_version) ?? 0;
    taken.set(c.data_version, n + 1);
    return n < RISING_PER_PUBLICATION;
  });
  const plural = { element: 'elements', topic: 'topics', keyword: 'keywords' }[kind];
  return feedOf(snapshot, top, viewer, {
    tag: `feeds/rising/${kind}`,
    title: `The ${plural} that rose most in research intensity`,
    subtitle: `At each publication of the data, the ${RISING_PER_PUBLICATION} ${plural} whose RIS rose most (new ones and communities turning rising among them).`,
    link: `${viewer.publicUrl}/`,
  });
}

/** An element's or subject's feed path, as the pages link it. */
export function feedPath(type: Kind, id: string): string {
  return type === 'element'
    ? `/v1/feeds/elements/${canonicalSymbol(id)}`
    : `/v1/feeds${subjectPath(type, id)}`;
}

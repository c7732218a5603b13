import type { CorpusStore } from '../ingest/corpus-store.js';
import { ELEMENT_INDEX } from '../tagging/elements.js';
import { TAGGER_VERSION, tagElements } from '../tagging/tagger.js';
import { dayNumber } from './dates.js';
import type { ScoringParameters } from './parameters.js';

/**
 * The corpus in memory, column by column, for scoring. Papers are numbered by ordinal in
 * (publication date, work id) order, so any paper list in ordinal order is also in date order.
 * Multi-valued facts (headline elements, topics, keywords, in-corpus references) are stored as
 * CSR arrays: the values of paper p are values[start[p] .. start[p + 1]).
 */
export interface Csr {
  start: Int32Array;
  values: Int32Array;
}

export interface TopicInfo {
  id: number;
  name: string;
  description: string | null;
  keywords: string[];
  fieldId: number | null;
  field: string | null;
  subfield: string | null;
  domain: string | null;
}

export interface Corpus {
  n: number;
  workId: Float64Array;
  doi: (string | null)[];
  title: (string | null)[];
  venue: (string | null)[];
  /** Publication year, 0 when unknown. */
  year: Int16Array;
  /** Exact publication date as a day number; NO_DAY when the record has no exact date. */
  day: Int32Array;
  /** Date used for ages: the exact date, or mid-year when only the year is known; NO_DAY if neither. */
  ageDay: Int32Array;
  pubDate: (string | null)[];
  /** cited_by_count, -1 when unknown. */
  citations: Int32Array;
  countsByYear: (string | null)[];
  primaryTopic: Int32Array;
  /** Field id of the primary topic (the cohort for percentiles), -1 when unknown. */
  field: Int32Array;
  topics: Csr;
  keywords: Csr;
  elements: Csr;
  refs: Csr;
  topicTable: Map<number, TopicInfo>;
  /** Headline topic index -> OpenAlex topic id (the topics CSR holds indexes). */
  topicIds: number[];
  keywordSlugs: string[];
  keywordNames: string[];
  /** The latest date the data covers (see cutoffDay). */
  cutoffDay: number;
}

export const NO_DAY = -2_147_483_648;

class CsrBuilder {
  private readonly start: Int32Array;
  private readonly rows: Int32Array[];

  constructor(private readonly n: number) {
    this.start = new Int32Array(n + 1);
    this.rows = new Array(n);
  }

  set(ordinal: number, values: Int32Array): void {
    this.rows[ordinal] = values;
  }

  finish(): Csr {
    let total = 0;
    for (let p = 0; p < this.n; p++) total += this.rows[p]?.length ?? 0;
    const values = new Int32Array(total);
    let length = 0;
    for (let p = 0; p < this.n; p++) {
      this.start[p] = length;
      const row = this.rows[p];
      if (row) {
        values.set(row, length);
        length += row.length;
      }
    }
    this.start[this.n] = length;
    return { start: this.start, values };
  }
}

const EMPTY = new Int32Array(0);

type WorkDbRow = [
  number, // id
  string | null, // doi
  string | null, // title
  number | null, // year
  string | null, // pub_date
  string | null, // venue
  number | null, // cited_by_count
  string | null, // counts_by_year
  number | null, // primary_topic
  string, // topics
  string | null, // keywords
  Buffer | null, // refs
  string, // elements
  number, // tagger_version
];

export function loadCorpus(store: CorpusStore, params: ScoringParameters): Corpus {
  const db = store.db;
  const topicTable = new Map<number, TopicInfo>();
  const topicRows = db
    .prepare('SELECT id, name, description, keywords, field_id, field, subfield, domain FROM topics')
    .all() as {
    id: number;
    name: string;
    description: string | null;
    keywords: string | null;
    field_id: number | null;
    field: string | null;
    subfield: string | null;
    domain: string | null;
  }[];
  for (const t of topicRows) {
    topicTable.set(t.id, {
      id: t.id,
      name: t.name,
      description: t.description,
      keywords: t.keywords ? (JSON.parse(t.keywords) as string[]) : [],
      fieldId: t.field_id,
      field: t.field,
      subfield: t.subfield,
      domain: t.domain,
    });
  }

  // Ordinals in (date, id) order; papers with no date first.
  const order = db.prepare("SELECT id FROM works ORDER BY coalesce(pub_date, year || '-07-01', ''), id").raw();
  const ordinalOf = new Map<number, number>();
  let n = 0;
  for (const [id] of order.iterate() as IterableIterator<[number]>) ordinalOf.set(id, n++);

  const corpus: Corpus = {
    n,
    workId: new Float64Array(n),
    doi: new Array(n).fill(null),
    title: new Array(n).fill(null),
    venue: new Array(n).fill(null),
    year: new Int16Array(n),
    day: new Int32Array(n).fill(NO_DAY),
    ageDay: new Int32Array(n).fill(NO_DAY),
    pubDate: new Array(n).fill(null),
    citations: new Int32Array(n).fill(-1),
    countsByYear: new Array(n).fill(null),
    primaryTopic: new Int32Array(n).fill(-1),
    field: new Int32Array(n).fill(-1),
    topics: { start: EMPTY, values: EMPTY },
    keywords: { start: EMPTY, values: EMPTY },
    elements: { start: EMPTY, values: EMPTY },
    refs: { start: EMPTY, values: EMPTY },
    topicTable,
    topicIds: [],
    keywordSlugs: [],
    keywordNames: [],
    cutoffDay: NO_DAY,
  };
  const topics = new CsrBuilder(n);
  const keywords = new CsrBuilder(n);
  const elements = new CsrBuilder(n);
  const refs = new CsrBuilder(n);
  const keywordIndex = new Map<string, number>();
  const topicIndex = new Map<number, number>();
  const indexOfTopic = (id: number) => {
    let idx = topicIndex.get(id);
    if (idx === undefined) {
      idx = corpus.topicIds.length;
      topicIndex.set(id, idx);
      corpus.topicIds.push(id);
    }
    return idx;
  };
  const keywordName = db.prepare('SELECT name FROM keywords WHERE slug = ?').pluck();
  let maxDay = NO_DAY;
  let maxUpdatedDay = NO_DAY;

  const rows = db
    .prepare(
      `SELECT id, doi, title, year, pub_date, venue, cited_by_count, counts_by_year, primary_topic, topics,
              keywords, refs, elements, tagger_version FROM works`,
    )
    .raw();
  const scratch = new Int32Array(4096);
  for (const r of rows.iterate() as IterableIterator<WorkDbRow>) {
    const p = ordinalOf.get(r[0])!;
    corpus.workId[p] = r[0];
    corpus.doi[p] = r[1];
    corpus.title[p] = r[2];
    corpus.year[p] = r[3] ?? 0;
    corpus.pubDate[p] = r[4];
    corpus.venue[p] = r[5];
    if (r[4]) {
      corpus.day[p] = dayNumber(r[4]);
      corpus.ageDay[p] = corpus.day[p]!;
    } else if (r[3]) {
      corpus.ageDay[p] = dayNumber(`${r[3]}-07-01`);
    }
    if (corpus.day[p]! > maxDay) maxDay = corpus.day[p]!;
    corpus.citations[p] = r[6] ?? -1;
    corpus.countsByYear[p] = r[7];
    if (r[8] !== null) {
      corpus.primaryTopic[p] = r[8];
      corpus.field[p] = topicTable.get(r[8])?.fieldId ?? -1;
    }

    // Headline topics: the primary topic and any topic at or above the threshold.
    let k = 0;
    if (r[8] !== null) scratch[k++] = indexOfTopic(r[8]);
    for (const [tid, score] of JSON.parse(r[9]) as [number, number | null][]) {
      if (tid !== r[8] && score !== null && score >= params.topicScoreThreshold) scratch[k++] = indexOfTopic(tid);
    }
    topics.set(p, k ? scratch.slice(0, k) : EMPTY);

    k = 0;
    if (r[10]) {
      for (const [slug, score] of JSON.parse(r[10]) as [string, number][]) {
        if (score < params.keywordScoreThreshold) continue;
        let idx = keywordIndex.get(slug);
        if (idx === undefined) {
          idx = corpus.keywordSlugs.length;
          keywordIndex.set(slug, idx);
          corpus.keywordSlugs.push(slug);
          corpus.keywordNames.push((keywordName.get(slug) as string | undefined) ?? slug);
        }
        scratch[k++] = idx;
      }
    }
    keywords.set(p, k ? scratch.slice(0, k) : EMPTY);

    // Tags from ingest stay valid while the tagger is the same version; otherwise tag again.
    const symbols = r[13] === TAGGER_VERSION ? (r[12] ? r[12].split(',') : []) : r[2] ? tagElements(r[2]) : [];
    k = 0;
    for (const s of symbols) {
      const e = ELEMENT_INDEX.get(s);
      if (e !== undefined) scratch[k++] = e;
    }
    elements.set(p, k ? scratch.slice(0, k) : EMPTY);

    if (r[11]) {
      const ids = new Float64Array(r[11].buffer.slice(r[11].byteOffset, r[11].byteOffset + r[11].byteLength));
      const list: number[] = [];
      for (const id of ids) {
        const o = ordinalOf.get(id);
        if (o !== undefined && o !== p) list.push(o);
      }
      refs.set(p, list.length ? Int32Array.from(list) : EMPTY);
    }
  }
  const updated = db.prepare("SELECT max(substr(updated_date, 1, 10)) FROM works WHERE updated_date <> ''").pluck().get() as
    | string
    | null;
  if (updated) maxUpdatedDay = dayNumber(updated);

  corpus.topics = topics.finish();
  corpus.keywords = keywords.finish();
  corpus.elements = elements.finish();
  corpus.refs = refs.finish();
  corpus.cutoffDay = cutoffDay(corpus, maxDay, maxUpdatedDay);
  return corpus;
}

/**
 * The data's cut-off date: the latest publication date in the corpus, except dates after the
 * latest updated_date (in-press papers dated in the future), when the corpus has update dates.
 */
function cutoffDay(corpus: Corpus, maxDay: number, maxUpdatedDay: number): number {
  if (maxUpdatedDay === NO_DAY || maxDay <= maxUpdatedDay) return maxDay;
  let best = NO_DAY;
  for (let p = 0; p < corpus.n; p++) {
    const d = corpus.day[p]!;
    if (d <= maxUpdatedDay && d > best) best = d;
  }
  return best;
}

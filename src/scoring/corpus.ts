import type { CorpusStore } from '../ingest/corpus-store.js';
import { tagNewWorks } from '../ingest/ingest.js';
import { ELEMENT_INDEX } from '../tagging/elements.js';
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

/** Citations by age summed over the fully cited papers of a field (the input of its curve). */
export interface CitationTotals {
  byAge: number[];
  citedPapers: number;
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
  /** Per field (-1: no field) and for the whole corpus, for the citation curves. */
  citationTotals: { byField: Map<number, CitationTotals>; all: CitationTotals };
  /** The latest date the data covers (see cutoffDay). */
  cutoffDay: number;
}

export const NO_DAY = -2_147_483_648;

/** Builds a CSR from (ordinal, value) pairs sorted by ordinal. */
export function csrFromPairs(n: number, ordinals: ArrayLike<number>, values: ArrayLike<number>): Csr {
  const start = new Int32Array(n + 1);
  for (let i = 0; i < ordinals.length; i++) start[ordinals[i]! + 1]!++;
  for (let p = 0; p < n; p++) start[p + 1]! += start[p]!;
  return { start, values: Int32Array.from(values) };
}

const col = <T>(columns: unknown[][], i: number) => (columns[i] ?? []) as T[];

export async function loadCorpus(store: CorpusStore, params: ScoringParameters): Promise<Corpus> {
  await tagNewWorks(store);
  const q = (sql: string) => store.columns(sql);

  const cutoff = (await store.scalar<string | null>(`
    WITH u AS (SELECT max(substr(updated_date, 1, 10)) FILTER (WHERE updated_date <> '') AS upd FROM works)
    SELECT max(pub_date) FILTER (WHERE u.upd IS NULL OR pub_date <= u.upd) FROM works, u`)) as string | null;
  const cutoffDay = cutoff ? dayNumber(cutoff) : NO_DAY;
  const cutoffYear = cutoff ? Number(cutoff.slice(0, 4)) : 0;

  await store.con.run(`CREATE OR REPLACE TEMP TABLE ord AS
    SELECT id, (row_number() OVER (ORDER BY coalesce(pub_date, CAST(year AS VARCHAR) || '-07-01', ''), id) - 1)::INTEGER AS o
    FROM works`);
  const papers = await q(`SELECT w.id::DOUBLE, doi, title, year, pub_date, venue, cited_by_count, primary_topic, field_id, t.symbols
    FROM works w JOIN ord USING (id) LEFT JOIN tags t ON t.id = w.id ORDER BY o`);
  const n = col(papers, 0).length;

  const corpus: Corpus = {
    n,
    workId: Float64Array.from(col<number>(papers, 0)),
    doi: col<string | null>(papers, 1),
    title: col<string | null>(papers, 2),
    venue: col<string | null>(papers, 5),
    year: Int16Array.from(col<number | null>(papers, 3), (y) => y ?? 0),
    day: new Int32Array(n).fill(NO_DAY),
    ageDay: new Int32Array(n).fill(NO_DAY),
    pubDate: col<string | null>(papers, 4),
    citations: Int32Array.from(col<number | null>(papers, 6), (c) => c ?? -1),
    primaryTopic: Int32Array.from(col<number | null>(papers, 7), (t) => t ?? -1),
    field: Int32Array.from(col<number | null>(papers, 8), (f) => f ?? -1),
    topics: { start: new Int32Array(n + 1), values: new Int32Array(0) },
    keywords: { start: new Int32Array(n + 1), values: new Int32Array(0) },
    elements: { start: new Int32Array(n + 1), values: new Int32Array(0) },
    refs: { start: new Int32Array(n + 1), values: new Int32Array(0) },
    topicTable: new Map(),
    topicIds: [],
    keywordSlugs: [],
    keywordNames: [],
    citationTotals: { byField: new Map(), all: { byAge: [], citedPapers: 0 } },
    cutoffDay,
  };
  const midYear = new Map<number, number>();
  for (let p = 0; p < n; p++) {
    const date = corpus.pubDate[p];
    if (date) {
      corpus.day[p] = dayNumber(date);
      corpus.ageDay[p] = corpus.day[p]!;
    } else if (corpus.year[p]) {
      const y = corpus.year[p]!;
      let d = midYear.get(y);
      if (d === undefined) midYear.set(y, (d = dayNumber(`${String(y).padStart(4, '0')}-07-01`)));
      corpus.ageDay[p] = d;
    }
  }

  // Headline elements: the tags the ingest stored for each title.
  const elementStart = corpus.elements.start;
  const elementValues: number[] = [];
  const symbols = col<string | null>(papers, 9);
  for (let p = 0; p < n; p++) {
    elementStart[p] = elementValues.length;
    const s = symbols[p];
    if (s) {
      for (const symbol of s.split(',')) {
        const e = ELEMENT_INDEX.get(symbol);
        if (e !== undefined) elementValues.push(e);
      }
    }
  }
  elementStart[n] = elementValues.length;
  corpus.elements.values = Int32Array.from(elementValues);

  // Headline topics: the primary topic and any topic at or above the threshold.
  const topicPairs = await q(`SELECT DISTINCT o, tid FROM (
      SELECT o, primary_topic AS tid FROM works JOIN ord USING (id) WHERE primary_topic IS NOT NULL
      UNION ALL
      SELECT o, t.id FROM (SELECT o, unnest(topics) AS t FROM works JOIN ord USING (id))
      WHERE t.id IS NOT NULL AND t.score >= ${params.topicScoreThreshold})
    ORDER BY o, tid`);
  const topicIndex = new Map<number, number>();
  const topicValues = col<number>(topicPairs, 1).map((id) => {
    let idx = topicIndex.get(id);
    if (idx === undefined) {
      idx = corpus.topicIds.length;
      topicIndex.set(id, idx);
      corpus.topicIds.push(id);
    }
    return idx;
  });
  corpus.topics = csrFromPairs(n, col<number>(topicPairs, 0), topicValues);

  const topicRows = await store.rows<{
    id: number;
    name: string;
    description: string | null;
    keywords: string | null;
    field_id: number | null;
    field: string | null;
    subfield: string | null;
    domain: string | null;
  }>('SELECT DISTINCT ON (id) id, name, description, keywords, field_id, field, subfield, domain FROM topics ORDER BY id, description NULLS LAST');
  for (const t of topicRows) {
    corpus.topicTable.set(t.id, {
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

  // Headline keywords, numbered by slug.
  await store.con.run(`CREATE OR REPLACE TEMP TABLE kw AS
    SELECT DISTINCT o, k.slug AS slug FROM (SELECT o, unnest(keywords) AS k FROM works JOIN ord USING (id))
    WHERE k.slug IS NOT NULL AND k.slug <> '' AND k.score >= ${params.keywordScoreThreshold}`);
  await store.con.run(`CREATE OR REPLACE TEMP TABLE kwidx AS
    SELECT slug, (row_number() OVER (ORDER BY slug) - 1)::INTEGER AS idx FROM (SELECT DISTINCT slug FROM kw)`);
  const vocabulary = await q(`SELECT slug, coalesce(k.name, slug) FROM kwidx LEFT JOIN
    (SELECT DISTINCT ON (slug) slug, name FROM keywords) k USING (slug) ORDER BY idx`);
  corpus.keywordSlugs = col<string>(vocabulary, 0);
  corpus.keywordNames = col<string>(vocabulary, 1);
  const keywordPairs = await q('SELECT o, idx FROM kw JOIN kwidx USING (slug) ORDER BY o, idx');
  corpus.keywords = csrFromPairs(n, col<number>(keywordPairs, 0), col<number>(keywordPairs, 1));

  // References inside the corpus, as ordinals.
  const refPairs = await q(`SELECT DISTINCT a.o, b.o FROM (SELECT id, unnest(refs) AS ref FROM works) u
    JOIN ord a ON a.id = u.id JOIN ord b ON b.id = u.ref WHERE a.o <> b.o ORDER BY 1, 2`);
  corpus.refs = csrFromPairs(n, col<number>(refPairs, 0), col<number>(refPairs, 1));

  corpus.citationTotals = await citationTotals(store, params.citationHorizonYears, cutoffYear);
  await store.con.run('DROP TABLE IF EXISTS kw; DROP TABLE IF EXISTS kwidx; DROP TABLE IF EXISTS ord');
  return corpus;
}

/**
 * Citations by age (years after publication) summed per field, over papers old enough to be
 * fully cited by the horizon and young enough for counts_by_year (which OpenAlex keeps for about
 * the last decade) to cover their whole life.
 */
async function citationTotals(store: CorpusStore, horizon: number, cutoffYear: number) {
  const sql = (groupBy: string) => `
    WITH coverage AS (SELECT min(c.year) AS first FROM (SELECT unnest(counts_by_year) AS c FROM works)),
    eligible AS (
      SELECT w.id, ${groupBy} AS grp, w.year, w.counts_by_year FROM works w, coverage
      WHERE w.counts_by_year IS NOT NULL AND w.year >= coverage.first AND w.year + ${horizon} <= ${cutoffYear}),
    flat AS (
      SELECT id, grp, c.year - year AS age, c.cited_by_count AS n FROM (SELECT id, grp, year, unnest(counts_by_year) AS c FROM eligible)
      WHERE c.year - year BETWEEN 0 AND ${horizon}),
    cited AS (SELECT grp, count(DISTINCT id)::INTEGER AS cited FROM flat WHERE n > 0 GROUP BY grp)
    SELECT grp, age, sum(n)::DOUBLE AS total, any_value(cited.cited) AS cited
    FROM flat JOIN cited USING (grp) GROUP BY grp, age ORDER BY grp, age`;
  const collect = (cols: unknown[][]) => {
    const out = new Map<number, CitationTotals>();
    const grp = col<number | null>(cols, 0);
    const age = col<number>(cols, 1);
    const total = col<number>(cols, 2);
    const cited = col<number>(cols, 3);
    grp.forEach((g, i) => {
      const key = g ?? -1;
      let t = out.get(key);
      if (!t) out.set(key, (t = { byAge: new Array(horizon + 1).fill(0), citedPapers: cited[i]! }));
      t.byAge[age[i]!] = total[i]!;
    });
    return out;
  };
  const byField = collect(await store.columns(sql('coalesce(w.field_id, -1)')));
  const all = collect(await store.columns(sql('0'))).get(0) ?? { byAge: new Array(horizon + 1).fill(0), citedPapers: 0 };
  return { byField, all };
}

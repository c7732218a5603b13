import { ELEMENTS } from '../elements/elements.js';
import type { CorpusStore } from '../ingest/corpus-store.js';
import { tagNewWorks } from '../ingest/ingest.js';
import { getOrCreate } from '../util/maps.js';
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
  /** Position of the paper's DOI in DOI order (papers without a DOI last): the ranking tie-break. */
  doiRank: Int32Array;
  /** Publication year, 0 when unknown. */
  year: Int16Array;
  /** Exact publication date as a day number; NO_DAY when the record has no exact date. */
  day: Int32Array;
  /** Date used for ages: the exact date, or mid-year when only the year is known; NO_DAY if neither. */
  ageDay: Int32Array;
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

/** Builds a CSR from (ordinal, value) pairs in any order (a counting sort by ordinal). */
export function csrFromPairs(n: number, ordinals: Int32Array, values: Int32Array): Csr {
  const start = new Int32Array(n + 1);
  for (let i = 0; i < ordinals.length; i++) start[ordinals[i]! + 1]!++;
  for (let p = 0; p < n; p++) start[p + 1]! += start[p]!;
  const fill = start.slice(0, n);
  const sorted = new Int32Array(values.length);
  for (let i = 0; i < ordinals.length; i++) sorted[fill[ordinals[i]!]!++] = values[i]!;
  // Values of one paper in ascending order, so the CSR does not depend on query order
  // (insertion sort in place: lists are short, and a subarray per paper costs more than the sort).
  for (let p = 0; p < n; p++) {
    const a = start[p]!;
    const b = start[p + 1]!;
    for (let i = a + 1; i < b; i++) {
      const v = sorted[i]!;
      let j = i - 1;
      while (j >= a && sorted[j]! > v) {
        sorted[j + 1] = sorted[j]!;
        j--;
      }
      sorted[j + 1] = v;
    }
  }
  return { start, values: sorted };
}

const col = <T>(columns: unknown[][], i: number) => (columns[i] ?? []) as T[];

/**
 * Loads the corpus store for scoring. The store keeps a temporary table `ord` (work id ->
 * ordinal) afterwards, which the snapshot writer reads the paper texts by.
 */
export async function loadCorpus(store: CorpusStore, params: ScoringParameters): Promise<Corpus> {
  await tagNewWorks(store);

  const cutoff = await store.scalar<string | null>(`
    WITH u AS (SELECT max(substr(updated_date, 1, 10)) FILTER (WHERE updated_date <> '') AS upd FROM works)
    SELECT max(pub_date) FILTER (WHERE u.upd IS NULL OR pub_date <= u.upd) FROM works, u`);
  const cutoffDay = cutoff ? dayNumber(cutoff) : NO_DAY;
  const cutoffYear = cutoff ? Number(cutoff.slice(0, 4)) : 0;

  await store.con.run(`CREATE OR REPLACE TEMP TABLE ord AS
    SELECT id,
      (row_number() OVER (ORDER BY coalesce(pub_date, CAST(year AS VARCHAR) || '-07-01', ''), id) - 1)::INTEGER AS o,
      (dense_rank() OVER (ORDER BY doi NULLS LAST))::INTEGER AS doi_rank
    FROM works`);
  const [ordinal, year, day, citations, primaryTopic, field, doiRank] = await store.intColumns(
    `SELECT o, year, (TRY_CAST(pub_date AS DATE) - DATE '1970-01-01')::INTEGER, cited_by_count, primary_topic, field_id, doi_rank
     FROM works JOIN ord USING (id)`,
    7,
    NO_DAY,
  );
  const [idOrdinal, ids] = await store.doubleColumns('SELECT o::DOUBLE, id::DOUBLE FROM ord', 2);
  const n = ordinal!.length;
  const place = <T extends Int32Array | Int16Array>(values: Int32Array, target: T, nullTo: number): T => {
    for (let i = 0; i < n; i++) {
      const v = values[i]!;
      target[ordinal![i]!] = v === NO_DAY ? nullTo : v;
    }
    return target;
  };
  const workId = new Float64Array(n);
  for (let i = 0; i < n; i++) workId[idOrdinal![i]!] = ids![i]!;

  const corpus: Corpus = {
    n,
    workId,
    doiRank: place(doiRank!, new Int32Array(n), n),
    year: place(year!, new Int16Array(n), 0),
    day: place(day!, new Int32Array(n), NO_DAY),
    ageDay: new Int32Array(n).fill(NO_DAY),
    citations: place(citations!, new Int32Array(n), -1),
    primaryTopic: place(primaryTopic!, new Int32Array(n), -1),
    field: place(field!, new Int32Array(n), -1),
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
    if (corpus.day[p] !== NO_DAY) corpus.ageDay[p] = corpus.day[p]!;
    else if (corpus.year[p]) {
      const y = corpus.year[p]!;
      corpus.ageDay[p] = getOrCreate(midYear, y, () => dayNumber(`${String(y).padStart(4, '0')}-07-01`));
    }
  }

  // Headline elements: the tags stored for each title, as element indexes.
  const symbols = ELEMENTS.map((e, i) => `('${e.symbol}', ${i})`).join(', ');
  const [elementOrdinals, elementValues] = await store.intColumns(
    `WITH symbols(symbol, idx) AS (VALUES ${symbols})
     SELECT o, idx FROM (SELECT id, unnest(string_split(symbols, ',')) AS symbol FROM tags WHERE symbols <> '')
     JOIN ord USING (id) JOIN symbols USING (symbol)`,
    2,
  );
  corpus.elements = csrFromPairs(n, elementOrdinals!, elementValues!);

  // Headline topics: the primary topic and any topic at or above the threshold.
  const [topicOrdinals, topicValues] = await store.intColumns(
    `SELECT DISTINCT o, tid FROM (
      SELECT o, primary_topic AS tid FROM works JOIN ord USING (id) WHERE primary_topic IS NOT NULL
      UNION ALL
      SELECT o, t.id FROM (SELECT o, unnest(topics) AS t FROM works JOIN ord USING (id))
      WHERE t.id IS NOT NULL AND t.score >= ${params.topicScoreThreshold})`,
    2,
  );
  const topicIndex = new Map<number, number>();
  const sortedTopicIds = [...new Set(topicValues!)].sort((a, b) => a - b);
  sortedTopicIds.forEach((id, i) => {
    topicIndex.set(id, i);
  });
  corpus.topicIds = sortedTopicIds;
  corpus.topics = csrFromPairs(
    n,
    topicOrdinals!,
    topicValues!.map((id) => topicIndex.get(id)!),
  );

  const topicRows = await store.rows<{
    id: number;
    name: string;
    description: string | null;
    keywords: string | null;
    field_id: number | null;
    field: string | null;
    subfield: string | null;
    domain: string | null;
  }>(
    'SELECT DISTINCT ON (id) id, name, description, keywords, field_id, field, subfield, domain FROM topics ORDER BY id, description NULLS LAST',
  );
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
  const vocabulary = await store.columns(`SELECT slug, coalesce(k.name, slug) FROM kwidx LEFT JOIN
    (SELECT DISTINCT ON (slug) slug, name FROM keywords) k USING (slug) ORDER BY idx`);
  corpus.keywordSlugs = col<string>(vocabulary, 0);
  corpus.keywordNames = col<string>(vocabulary, 1);
  const [keywordOrdinals, keywordValues] = await store.intColumns(
    'SELECT o, idx FROM kw JOIN kwidx USING (slug)',
    2,
  );
  corpus.keywords = csrFromPairs(n, keywordOrdinals!, keywordValues!);
  await store.con.run('DROP TABLE kw; DROP TABLE kwidx');

  // References inside the corpus, as ordinals.
  // Sized from the number of references (an upper bound): no regrowing of ~20M values per column.
  const refCount = Number((await store.scalar<bigint | null>('SELECT sum(len(refs)) FROM works')) ?? 0);
  const [refFrom, refTo] = await store.intColumns(
    `SELECT a.o, b.o FROM (SELECT id, unnest(refs) AS ref FROM works) u
     JOIN ord a ON a.id = u.id JOIN ord b ON b.id = u.ref WHERE a.o <> b.o`,
    2,
    -1,
    refCount,
  );
  corpus.refs = csrFromPairs(n, refFrom!, refTo!);

  corpus.citationTotals = await citationTotals(store, params.citationHorizonYears, cutoffYear);
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
      const t = getOrCreate(out, key, () => ({
        byAge: new Array<number>(horizon + 1).fill(0),
        citedPapers: cited[i]!,
      }));
      t.byAge[age[i]!] = total[i]!;
    });
    return out;
  };
  const byField = collect(await store.columns(sql('coalesce(w.field_id, -1)')));
  const all = collect(await store.columns(sql('0'))).get(0) ?? {
    byAge: new Array(horizon + 1).fill(0),
    citedPapers: 0,
  };
  return { byField, all };
}

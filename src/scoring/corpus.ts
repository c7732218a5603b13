import { ELEMENTS } from '../elements/elements.js';
import type { CorpusStore } from '../ingest/corpus-store.js';
import { getOrCreate } from '../util/maps.js';
import { sharedArray } from '../util/shared-memory.js';
import { dayNumber } from './dates.js';
import type { ScoringParameters } from './parameters.js';
import { findHiddenVersions, SHOWN_WORKS } from './work-versions.js';

/**
 * The corpus in memory, column by column, for scoring. Papers are numbered by ordinal in
 * (publication date, work id) order, so any paper list in ordinal order is also in date order.
 * Multi-valued facts (headline elements, topics, keywords) are stored as CSR arrays: the values
 * of paper p are values[start[p] .. start[p + 1]). The in-corpus references are not loaded (0.9
 * GB at 10M works): the build reads them from the store where it needs them (REF_PAIRS_SQL).
 */
export interface Csr {
  start: Int32Array;
  values: Int32Array;
}

/**
 * What the build cache (corpus-cache.ts) gives back: the columns the last build read from the
 * store, in its ordinal order, which the load re-numbers with the changed works.
 */
export interface CachedCorpus {
  generation: number;
  /** The digest of its bytes (the header's): names this very cache. */
  digest: string;
  n: number;
  workId: Float64Array;
  elements: Csr;
  topics: Csr;
  topicIds: number[];
  keywords: Csr;
  keywordSlugs: string[];
}

interface TopicInfo {
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

/**
 * The CSR of a query's (ordinal, value) pairs, read twice instead of held: once counted by
 * ordinal, then each value put straight in its place. The pairs themselves (two columns, grown
 * by doubling) cost two to three times the CSR.
 * NULL values are -1, as intColumns reads them.
 */
async function csrFromQuery(
  store: CorpusStore,
  n: number,
  pairsSql: string,
  { distinct = false } = {},
): Promise<Csr> {
  const pairs = `(${pairsSql}) AS pairs(o, v)`;
  const start = sharedArray(Int32Array, n + 1);
  await store.forEachChunk(`SELECT o, count(*)::INTEGER FROM ${pairs} GROUP BY o`, (chunk) => {
    const [o, count] = [chunk.getColumnVector(0), chunk.getColumnVector(1)];
    for (let i = 0; i < chunk.rowCount; i++) start[(o.getItem(i) as number) + 1] = count.getItem(i) as number;
  });
  for (let p = 0; p < n; p++) start[p + 1]! += start[p]!;
  const values = sharedArray(Int32Array, start[n]!);
  const fill = start.slice(0, n);
  await store.forEachChunk(`SELECT o, v FROM ${pairs}`, (chunk) => {
    const [o, v] = [chunk.getColumnVector(0), chunk.getColumnVector(1)];
    for (let i = 0; i < chunk.rowCount; i++) {
      const at = fill[o.getItem(i) as number]!++;
      // A pair the count did not see (the store changed between the two reads) would write past
      // the paper's end: refuse rather than build from it.
      if (at >= values.length) throw new Error('the corpus store changed while the build read it');
      values[at] = (v.getItem(i) as number | null) ?? -1;
    }
  });
  sortEachPaper(n, start, values);
  return distinct ? withoutRepeats(n, start, values) : { start, values };
}

/** A CSR of sorted values with each paper's repeated values dropped, in place (a view of fewer values). */
export function withoutRepeats(n: number, start: Int32Array, values: Int32Array): Csr {
  let kept = 0;
  let from = 0;
  for (let p = 0; p < n; p++) {
    const to = start[p + 1]!;
    start[p] = kept;
    for (let i = from; i < to; i++)
      if (i === from || values[i] !== values[i - 1]) values[kept++] = values[i]!;
    from = to;
  }
  start[n] = kept;
  return { start, values: values.subarray(0, kept) };
}

/**
 * Values of one paper in ascending order, so the CSR does not depend on query order
 * (insertion sort in place: lists are short, and a subarray per paper costs more than the sort).
 */
function sortEachPaper(n: number, start: Int32Array, sorted: Int32Array): void {
  for (let p = 0; p < n; p++) sortRange(sorted, start[p]!, start[p + 1]!);
}

/** values[from .. to) in ascending order, by insertion (a paper's values are few). */
export function sortRange(values: Int32Array, from: number, to: number): void {
  for (let i = from + 1; i < to; i++) {
    const v = values[i]!;
    let j = i - 1;
    while (j >= from && values[j]! > v) {
      values[j + 1] = values[j]!;
      j--;
    }
    values[j + 1] = v;
  }
}

const col = <T>(columns: unknown[][], i: number) => (columns[i] ?? []) as T[];

/** How the headline facts were loaded: in full, or from the build cache plus the changed works. */
export interface LoadReport {
  incremental: boolean;
  /** Works changed (added, replaced or removed) since the cache, when incremental. */
  changed: number;
  /**
   * When incremental: each paper's ordinal in the cache (so in the snapshot built with it) when its
   * work is unchanged since, else -1.
   */
  cachedOrdinal?: Int32Array;
  /**
   * When incremental: what the references' staging needs to bring the cache's references up to
   * date (refs-columns.ts) instead of reading them all again.
   */
  refsDelta?: RefsDelta;
  /** When a cache was given but not used: why the corpus no longer matches it. */
  mismatch?: string;
}

/**
 * Loads the corpus store for scoring. The store keeps a temporary table `ord` (work id ->
 * ordinal, with the DOI rank and the facts loaded from it) afterwards, which the snapshot writer
 * reads the paper texts and the references by, and the clusters their votes. Titles must have
 * been tagged (the tag step) first. With a build cache (corpus-cache.ts) the headline elements,
 * topics and keywords of unchanged works come from the cache, re-numbered, and only the changed
 * works are read; the result is the same as a full load.
 */
export async function loadCorpusReporting(
  store: CorpusStore,
  params: ScoringParameters,
  readCache: CachedCorpus | null | (() => CachedCorpus | null),
  /** Told as each step of the load ends (minutes at 10M works: the build's log says where it is). */
  progress: (step: string) => void = () => {},
): Promise<{ corpus: Corpus; report: LoadReport }> {
  // The other versions of a work shown are left out of the corpus: a work counts once.
  await findHiddenVersions(store);
  progress('other versions of works found');
  const cutoff = await store.scalar<string | null>(`
    WITH u AS (SELECT max(substr(updated_date, 1, 10)) FILTER (WHERE updated_date <> '') AS upd FROM ${SHOWN_WORKS})
    SELECT max(pub_date) FILTER (WHERE u.upd IS NULL OR pub_date <= u.upd) FROM ${SHOWN_WORKS}, u`);
  const cutoffDay = cutoff ? dayNumber(cutoff) : NO_DAY;
  const cutoffYear = cutoff ? Number(cutoff.slice(0, 4)) : 0;

  // Ordinals in (date, id) order, the date as the number YYYYMMDD (the store keeps only dates of
  // that form), mid-year (YYYY0701) when only the year is known, papers with neither first: the
  // order of the text dates, sorted as numbers (0.1 s less of the load at 1M works).
  const ordered = store.con.run(`CREATE OR REPLACE TEMP TABLE ord AS
    SELECT id,
      (row_number() OVER (ORDER BY coalesce(TRY_CAST(replace(pub_date, '-', '') AS BIGINT), year::BIGINT * 10000 + 701) NULLS FIRST, id) - 1)::INTEGER AS o,
      (dense_rank() OVER (ORDER BY doi NULLS LAST))::INTEGER AS doi_rank,
      -- The facts read next, taken in the same pass (no join of the works again); named apart from
      -- the works' columns, which other queries join this table to.
      year AS fact_year, (TRY_CAST(pub_date AS DATE) - DATE '1970-01-01')::INTEGER AS fact_day,
      cited_by_count AS fact_citations, primary_topic AS fact_topic, field_id AS fact_field
    FROM ${SHOWN_WORKS}`);
  // A cache given as a function is read while DuckDB orders the corpus (on its own threads).
  let cache: CachedCorpus | null;
  try {
    cache = typeof readCache === 'function' ? readCache() : readCache;
  } finally {
    await ordered;
  }
  // Each work's facts straight into its place (no column held beside the corpus's own).
  const n = Number(await store.scalar<bigint>('SELECT count(*) FROM ord'));
  const corpus: Corpus = {
    n,
    workId: sharedArray(Float64Array, n),
    doiRank: sharedArray(Int32Array, n),
    year: sharedArray(Int16Array, n),
    day: sharedArray(Int32Array, n),
    ageDay: sharedArray(Int32Array, n).fill(NO_DAY),
    citations: sharedArray(Int32Array, n),
    primaryTopic: sharedArray(Int32Array, n),
    field: sharedArray(Int32Array, n),
    topics: { start: new Int32Array(n + 1), values: new Int32Array(0) },
    keywords: { start: new Int32Array(n + 1), values: new Int32Array(0) },
    elements: { start: new Int32Array(n + 1), values: new Int32Array(0) },
    topicTable: new Map(),
    topicIds: [],
    keywordSlugs: [],
    keywordNames: [],
    citationTotals: { byField: new Map(), all: { byAge: [], citedPapers: 0 } },
    cutoffDay,
  };
  const read = await store.placeColumns(
    'SELECT o, fact_year, fact_day, fact_citations, fact_topic, fact_field, doi_rank, id::DOUBLE FROM ord',
    [
      { array: corpus.year, nullTo: 0 },
      { array: corpus.day, nullTo: NO_DAY },
      { array: corpus.citations, nullTo: -1 },
      { array: corpus.primaryTopic, nullTo: -1 },
      { array: corpus.field, nullTo: -1 },
      { array: corpus.doiRank, nullTo: n },
      { array: corpus.workId, nullTo: Number.NaN },
    ],
  );
  if (read !== n) throw new Error('the corpus store changed while the build read it');
  // From here the build joins `ord` by id for the ordinal alone (and the citation votes by the
  // primary topic): the facts let go. DuckDB keeps a temporary table in its memory, not all of
  // it evictable: 560 MB at 10M works with the facts, 240 without.
  await store.con.run('CREATE OR REPLACE TEMP TABLE ord AS SELECT id, o, fact_topic FROM ord');
  progress(`${n} works ordered`);
  const midYear = new Map<number, number>();
  for (let p = 0; p < n; p++) {
    if (corpus.day[p] !== NO_DAY) corpus.ageDay[p] = corpus.day[p]!;
    else if (corpus.year[p]) {
      const y = corpus.year[p]!;
      corpus.ageDay[p] = getOrCreate(midYear, y, () => dayNumber(`${String(y).padStart(4, '0')}-07-01`));
    }
  }

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

  let report: LoadReport = { incremental: false, changed: 0 };
  const match = cache ? await deltaFromCache(store, corpus, cache) : null;
  const delta = match && 'keep' in match ? match : null;
  if (match && 'mismatch' in match) report.mismatch = match.mismatch;
  if (delta) {
    await loadHeadlinesIncrementally(store, corpus, cache!, delta, params);
    const cachedOrdinal = new Int32Array(corpus.n).fill(-1);
    delta.keep.forEach((o, p) => {
      if (o >= 0) cachedOrdinal[o] = p;
    });
    const { target, changedIds, addedIds } = delta;
    report = {
      incremental: true,
      changed: delta.changed,
      cachedOrdinal,
      refsDelta: { target, changedIds, addedIds },
    };
  } else await loadHeadlines(store, corpus, params, 'works', progress);
  progress('headline elements, topics and keywords read');
  await store.con.run('DROP TABLE IF EXISTS changed');

  corpus.citationTotals = await citationTotals(store, params.citationHorizonYears, cutoffYear);
  return { corpus, report };
}

const ELEMENT_SYMBOLS = ELEMENTS.map((e, i) => `('${e.symbol}', ${i})`).join(', ');

/** (ordinal, element index) of the headline elements of the works of `source`. */
const elementPairsSql = (source: string) => `WITH symbols(symbol, idx) AS (VALUES ${ELEMENT_SYMBOLS})
     SELECT o, idx FROM (SELECT id, unnest(string_split(symbols, ',')) AS symbol FROM tags
       WHERE symbols <> ''${source === 'works' ? '' : ` AND id IN (SELECT id FROM ${source})`})
     JOIN ord USING (id) JOIN symbols USING (symbol)`;

/** (ordinal, OpenAlex topic id): the primary topic and any topic at or above the threshold. */
const topicPairsSql = (source: string, params: ScoringParameters) => `SELECT DISTINCT o, tid FROM (
      SELECT o, primary_topic AS tid FROM ${source} JOIN ord USING (id) WHERE primary_topic IS NOT NULL
      UNION ALL
      SELECT o, t.id FROM (SELECT o, unnest(topics) AS t FROM ${source} JOIN ord USING (id))
      WHERE t.id IS NOT NULL AND t.score >= ${params.topicScoreThreshold})`;

/** The slugs of the headline keywords of the works of `source` in the load (`ord`), each once. */
const keywordSlugsSql = (source: string, params: ScoringParameters) => `
    SELECT DISTINCT k.slug AS slug FROM (SELECT unnest(keywords) AS k FROM ${source} SEMI JOIN ord USING (id))
    WHERE k.slug IS NOT NULL AND k.slug <> '' AND k.score >= ${params.keywordScoreThreshold}`;

/**
 * (ordinal, keyword index) of the headline keywords, by the numbered slugs of table kwidx; a
 * keyword a work lists twice comes twice (csrFromQuery's distinct drops it: no DISTINCT over
 * slugs here, which at 10M works is more than DuckDB's memory and cannot spill).
 */
const keywordIndexPairsSql = (source: string, params: ScoringParameters) => `
    SELECT o, idx FROM (SELECT o, unnest(keywords) AS k FROM ${source} JOIN ord USING (id))
    JOIN kwidx ON kwidx.slug = k.slug WHERE k.score >= ${params.keywordScoreThreshold}`;

/** (ordinal, slug) of the headline keywords. */
const keywordPairsSql = (source: string, params: ScoringParameters) => `
    SELECT DISTINCT o, k.slug AS slug FROM (SELECT o, unnest(keywords) AS k FROM ${source} JOIN ord USING (id))
    WHERE k.slug IS NOT NULL AND k.slug <> '' AND k.score >= ${params.keywordScoreThreshold}`;

/**
 * (citing ordinal, cited ordinal) of the references inside the corpus, a self-citation left out;
 * valid while the store keeps the load's table `ord`.
 */
export const REF_PAIRS_SQL = `SELECT a.o, b.o FROM (SELECT id, unnest(refs) AS ref FROM works) u
     JOIN ord a ON a.id = u.id JOIN ord b ON b.id = u.ref WHERE a.o <> b.o`;

/** The keyword vocabulary of the slugs in table `table`: slugs in order, with names. */
const vocabularySql = (
  table: string,
) => `SELECT slug, coalesce(k.name, slug) FROM (SELECT DISTINCT slug FROM ${table})
    LEFT JOIN (SELECT DISTINCT ON (slug) slug, name FROM keywords) k USING (slug) ORDER BY slug`;

/** Headline elements, topics and keywords, read in full. */
async function loadHeadlines(
  store: CorpusStore,
  corpus: Corpus,
  params: ScoringParameters,
  source: string,
  progress: (step: string) => void,
) {
  const n = corpus.n;
  // Headline elements: the tags stored for each title, as element indexes.
  corpus.elements = await csrFromQuery(store, n, elementPairsSql(source));
  progress('headline elements read');

  // Headline topics: the primary topic and any topic at or above the threshold.
  numberTopics(corpus, await csrFromQuery(store, n, topicPairsSql(source, params)));
  progress('headline topics read');

  // Headline keywords, numbered by slug.
  await store.con.run(`CREATE OR REPLACE TEMP TABLE kwidx AS
    SELECT slug, (row_number() OVER (ORDER BY slug) - 1)::INTEGER AS idx FROM (${keywordSlugsSql(source, params)})`);
  const vocabulary = await store.columns(vocabularySql('kwidx'));
  corpus.keywordSlugs = col<string>(vocabulary, 0);
  corpus.keywordNames = col<string>(vocabulary, 1);
  corpus.keywords = await csrFromQuery(store, n, keywordIndexPairsSql(source, params), { distinct: true });
  await store.con.run('DROP TABLE kwidx');
}

/**
 * Position of a work id in `ids` (-1 if absent), through an open-addressing table of typed
 * arrays: a Map of a million double keys took about a second to fill, this a tenth of that.
 */
export function idIndex(ids: Float64Array): (id: number) => number {
  let bits = 4;
  while (1 << bits < ids.length * 2) bits++;
  const mask = (1 << bits) - 1;
  const slots = new Int32Array(1 << bits).fill(-1);
  // Ids are integers below 2^53: mix their low and high 32 bits (>>> 0 is the value mod 2^32).
  const slotOf = (id: number) =>
    Math.imul((id >>> 0) ^ Math.imul((id / 4294967296) >>> 0, 0x9e3779b1), 0x85ebca6b) >>> (32 - bits);
  for (let i = 0; i < ids.length; i++) {
    let s = slotOf(ids[i]!);
    while (slots[s] !== -1 && ids[slots[s]!] !== ids[i]) s = (s + 1) & mask;
    slots[s] = i; // a repeated id keeps its last position, as Map.set did
  }
  return (id) => {
    for (let s = slotOf(id); ; s = (s + 1) & mask) {
      const i = slots[s]!;
      if (i === -1 || ids[i] === id) return i;
    }
  };
}

/**
 * Leaves in table `changed` the logged works and, of their version partners, those shown now and
 * not in the cache or the reverse: a partner shown (or hidden) as before, its record unchanged,
 * is an unchanged work. A generic title shares its key with thousands of works (a day of 61,000
 * records at 10M works named a million partners), and a partner read again is a row made again.
 */
async function keepFlippedPartners(store: CorpusStore, cache: CachedCorpus): Promise<void> {
  const none = new Float64Array(0);
  const [ids = none, shown = none] = await store.doubleColumns(
    'SELECT id::DOUBLE, (o IS NOT NULL)::DOUBLE FROM changed LEFT JOIN ord USING (id) WHERE NOT logged',
    2,
  );
  if (ids.length === 0) return;
  const partner = idIndex(ids);
  const cached = new Uint8Array(ids.length);
  for (let p = 0; p < cache.n; p++) {
    const i = partner(cache.workId[p]!);
    if (i >= 0) cached[i] = 1;
  }
  await store.idTable(
    'unflipped',
    ids.filter((_, i) => (shown[i] === 1) === (cached[i] === 1)),
  );
  await store.con.run('DELETE FROM changed WHERE id IN (SELECT id FROM unflipped); DROP TABLE unflipped');
}

interface Delta extends RefsDelta {
  changed: number;
  /** New ordinal of each cached paper whose work is unchanged, else -1. */
  keep: Int32Array;
}

/** How the cache's ordinals map to the corpus now, for references (refs-columns.ts). */
export interface RefsDelta {
  /** New ordinal of each cached paper still in the corpus (changed or not), else -1. */
  target: Int32Array;
  /** The works changed since the cache (ids), whose references are read again. */
  changedIds: Float64Array;
  /** Works in the corpus now that were not in the cache (ids): references to them are new. */
  addedIds: Float64Array;
}

/**
 * Matches the cache to the corpus as it is now, through the change log: null (load in full)
 * unless every paper now is either an unchanged cached one or a changed one that is read again.
 * The unchanged works keep their order (their dates and ids are the same), so they are matched
 * in one walk of both orders, skipping the changed works' ordinals now; a work out of that
 * order (the ordering rule changed since) falls back to the full load.
 */
async function deltaFromCache(
  store: CorpusStore,
  corpus: Corpus,
  cache: CachedCorpus,
): Promise<Delta | { mismatch: string }> {
  // A work whose version partner changed may be shown now where it was not (or the reverse): it is
  // read again too, found by the partner's title key now or, for a partner removed or retitled,
  // as the change log kept it. (A log written before it kept keys has none: such a partner is
  // not found, the walk below then finds a work neither cached nor logged, and the load is made
  // in full.)
  await store.con.run(
    `CREATE OR REPLACE TEMP TABLE changed AS SELECT id, bool_or(logged) AS logged FROM (
      SELECT id, true AS logged FROM changes WHERE gen > ${cache.generation}
      UNION ALL
      SELECT id, false FROM title_keys WHERE k IN (
        SELECT k FROM title_keys WHERE id IN (SELECT id FROM changes WHERE gen > ${cache.generation})
        UNION ALL
        SELECT k FROM changes WHERE gen > ${cache.generation} AND k IS NOT NULL)) GROUP BY id`,
  );
  await keepFlippedPartners(store, cache);
  // The changed works and their ordinal now (-1: no longer in the corpus), those in it by ordinal.
  const none = new Float64Array(0);
  const [changedIds = none, changedOrdinal = none] = await store.doubleColumns(
    'SELECT id::DOUBLE, coalesce(o, -1)::DOUBLE FROM changed LEFT JOIN ord USING (id) ORDER BY 2, 1',
    2,
  );
  const changedIndex = idIndex(changedIds);
  const wasCached = new Uint8Array(changedIds.length);
  const keep = new Int32Array(cache.n).fill(-1);
  const target = new Int32Array(cache.n).fill(-1);
  let next = 0; // the next ordinal now
  let skip = changedOrdinal.findIndex((o) => o >= 0); // the next changed work's ordinal now, in order
  if (skip < 0) skip = changedOrdinal.length;
  const skipChanged = () => {
    while (skip < changedOrdinal.length && changedOrdinal[skip] === next) {
      next++;
      skip++;
    }
  };
  for (let p = 0; p < cache.n; p++) {
    const id = cache.workId[p]!;
    const c = changedIndex(id);
    if (c >= 0) {
      wasCached[c] = 1;
      target[p] = changedOrdinal[c]!;
      continue;
    }
    skipChanged();
    // An unchanged work must be the next one now: else it is gone or moved without a change logged.
    if (next >= corpus.n || corpus.workId[next] !== id)
      return {
        mismatch: `W${id}, unchanged since the cache (at ${p} of its ${cache.n}), is not the next work now (${next >= corpus.n ? 'none' : `W${corpus.workId[next]}`} at ${next} of ${corpus.n})`,
      };
    keep[p] = next;
    target[p] = next++;
  }
  skipChanged();
  if (next !== corpus.n)
    return {
      mismatch: `W${corpus.workId[next]} (at ${next} of ${corpus.n}) is neither in the cache nor logged as changed`,
    };
  const added: number[] = [];
  for (let c = 0; c < changedIds.length; c++)
    if (changedOrdinal[c]! >= 0 && !wasCached[c]) added.push(changedIds[c]!);
  return { changed: changedIds.length, keep, target, changedIds, addedIds: Float64Array.from(added) };
}

/**
 * A CSR merged from the cached papers that are kept (`rows`: new ordinal, or -1), with each value
 * v replaced by map[v] (-1 drops it; no map keeps v), and the fresh (ordinal, value) pairs read
 * from the store; built directly, without pair arrays of the whole. A lookup array, not a
 * function per value: this runs over every cached value, and one call site given several
 * different callbacks does not get them inlined.
 */
function mergedCsr(
  n: number,
  csr: Csr,
  rows: Int32Array,
  map: Int32Array | null,
  fresh: readonly Int32Array[],
): Csr {
  const [freshOrdinals, freshValues] = fresh as [Int32Array, Int32Array];
  const { start: from, values: cached } = csr;
  const start = sharedArray(Int32Array, n + 1);
  for (let p = 0; p < rows.length; p++) {
    const o = rows[p]!;
    if (o < 0) continue;
    let count = 0;
    if (map === null) count = from[p + 1]! - from[p]!;
    else for (let i = from[p]!; i < from[p + 1]!; i++) if (map[cached[i]!]! >= 0) count++;
    start[o + 1] = count;
  }
  for (let i = 0; i < freshOrdinals.length; i++) start[freshOrdinals[i]! + 1]!++;
  for (let p = 0; p < n; p++) start[p + 1]! += start[p]!;
  const fill = start.slice(0, n);
  const values = sharedArray(Int32Array, start[n]!);
  for (let p = 0; p < rows.length; p++) {
    const o = rows[p]!;
    if (o < 0) continue;
    let f = fill[o]!;
    if (map === null) {
      values.set(cached.subarray(from[p]!, from[p + 1]!), f);
      f += from[p + 1]! - from[p]!;
    } else
      for (let i = from[p]!; i < from[p + 1]!; i++) {
        const v = map[cached[i]!]!;
        if (v >= 0) values[f++] = v;
      }
    fill[o] = f;
  }
  for (let i = 0; i < freshOrdinals.length; i++) values[fill[freshOrdinals[i]!]!++] = freshValues[i]!;
  sortEachPaper(n, start, values);
  return { start, values };
}

/**
 * The corpus's topics from a CSR of OpenAlex topic ids: the ids in use, ascending, and the CSR
 * with each id replaced by its index among them (in place; the order within a paper is kept, as
 * the numbering keeps the ids' order).
 */
function numberTopics(corpus: Corpus, byId: Csr): void {
  const topicIds = [...new Set(byId.values)].sort((a, b) => a - b);
  const index = new Map(topicIds.map((id, i) => [id, i]));
  for (let i = 0; i < byId.values.length; i++) byId.values[i] = index.get(byId.values[i]!)!;
  corpus.topicIds = topicIds;
  corpus.topics = byId;
}

/** Fills the headline CSRs from the cache (unchanged works) and the store (changed works). */
async function loadHeadlinesIncrementally(
  store: CorpusStore,
  corpus: Corpus,
  cache: CachedCorpus,
  delta: Delta,
  params: ScoringParameters,
) {
  const n = corpus.n;
  const source = '(SELECT * FROM works WHERE id IN (SELECT id FROM changed))';
  corpus.elements = mergedCsr(
    n,
    cache.elements,
    delta.keep,
    null,
    await store.intColumns(elementPairsSql(source), 2),
  );
  // Each cached column is let go once merged (peak memory at a million works).
  const none: Csr = { start: new Int32Array(0), values: new Int32Array(0) };
  cache.elements = none;

  // Topics as OpenAlex ids, numbered again over the ids in use.
  numberTopics(
    corpus,
    mergedCsr(
      n,
      cache.topics,
      delta.keep,
      Int32Array.from(cache.topicIds),
      await store.intColumns(topicPairsSql(source, params), 2),
    ),
  );
  cache.topics = none;

  // Keywords: the vocabulary (slugs in use, in the store's order, with today's names) again.
  const [freshOrdinals, freshSlugs] = (await store.columns(keywordPairsSql(source, params))) as [
    number[] | undefined,
    string[] | undefined,
  ];
  const used = new Uint8Array(cache.keywordSlugs.length);
  for (let p = 0; p < cache.n; p++) {
    if (delta.keep[p]! < 0) continue;
    for (let i = cache.keywords.start[p]!; i < cache.keywords.start[p + 1]!; i++)
      used[cache.keywords.values[i]!] = 1;
  }
  await store.con.run('CREATE OR REPLACE TEMP TABLE kwv (slug VARCHAR)');
  const appender = await store.con.createAppender('kwv');
  cache.keywordSlugs.forEach((slug, i) => {
    if (!used[i]) return;
    appender.appendVarchar(slug);
    appender.endRow();
  });
  for (const slug of freshSlugs ?? []) {
    appender.appendVarchar(slug);
    appender.endRow();
  }
  appender.closeSync();
  const vocabulary = await store.columns(vocabularySql('kwv'));
  await store.con.run('DROP TABLE kwv');
  corpus.keywordSlugs = col<string>(vocabulary, 0);
  corpus.keywordNames = col<string>(vocabulary, 1);
  const slugIndex = new Map(corpus.keywordSlugs.map((s, i) => [s, i]));
  const remap = Int32Array.from(cache.keywordSlugs, (s) => slugIndex.get(s) ?? -1);
  corpus.keywords = mergedCsr(n, cache.keywords, delta.keep, remap, [
    Int32Array.from(freshOrdinals ?? []),
    Int32Array.from(freshSlugs ?? [], (s) => slugIndex.get(s)!),
  ]);
  cache.keywords = none;
}

/**
 * Citations by age (years after publication) summed per field, over papers old enough to be
 * fully cited by the horizon and young enough for counts_by_year (which OpenAlex keeps for about
 * the last decade) to cover their whole life. A field counts only with at least one citation in
 * it; the whole corpus's totals are the sums over every field's (a work has one field), taken in
 * the same pass (integers: the order of the sums does not matter), counted only when the corpus
 * has a citation at all.
 */
async function citationTotals(store: CorpusStore, horizon: number, cutoffYear: number) {
  const cols = await store.columns(`
    WITH coverage AS (SELECT min(c.year) AS first FROM (SELECT unnest(counts_by_year) AS c FROM ${SHOWN_WORKS})),
    eligible AS (
      SELECT w.id, coalesce(w.field_id, -1) AS grp, w.year, w.counts_by_year FROM ${SHOWN_WORKS} w, coverage
      WHERE w.counts_by_year IS NOT NULL AND w.year >= coverage.first AND w.year + ${horizon} <= ${cutoffYear}),
    flat AS (
      SELECT id, grp, c.year - year AS age, c.cited_by_count AS n FROM (SELECT id, grp, year, unnest(counts_by_year) AS c FROM eligible)
      WHERE c.year - year BETWEEN 0 AND ${horizon}),
    cited AS (SELECT grp, count(DISTINCT id)::INTEGER AS cited FROM flat WHERE n > 0 GROUP BY grp)
    SELECT grp, age, sum(n)::DOUBLE AS total, coalesce(any_value(cited.cited), 0) AS cited
    FROM flat LEFT JOIN cited USING (grp) GROUP BY grp, age ORDER BY grp, age`);
  const grp = col<number>(cols, 0);
  const age = col<number>(cols, 1);
  const total = col<number>(cols, 2);
  const cited = col<number>(cols, 3);
  const byField = new Map<number, CitationTotals>();
  const all: CitationTotals = { byAge: new Array<number>(horizon + 1).fill(0), citedPapers: 0 };
  grp.forEach((g, i) => {
    all.byAge[age[i]!]! += total[i]!;
    if (cited[i] === 0) return; // a field without a citation has no curve of its own
    const t = getOrCreate(byField, g, () => {
      all.citedPapers += cited[i]!;
      return { byAge: new Array<number>(horizon + 1).fill(0), citedPapers: cited[i]! };
    });
    t.byAge[age[i]!] = total[i]!;
  });
  if (all.citedPapers === 0) all.byAge.fill(0);
  return { byField, all };
}

import type Database from 'better-sqlite3';
import { decodeSeries, type StoredSeries } from '../scoring/history-codec.js';
import type { Resolution } from '../scoring/resolutions.js';
import type { SubjectType } from '../scoring/score-entities.js';
import { readPaperColumnBytes } from './column-parts.js';
import { BY_LENGTH_SHIFT } from './schema.js';
import { type PendingTitleStats, startTitleStats, type TitleStats } from './title-stats.js';
import { titleTerm } from './title-terms.js';
import { type TopicMatch, TopicSearch } from './topic-search.js';

/**
 * Every query the service makes of an open snapshot (core, lab, web), typed, each statement
 * prepared once per snapshot on first use. The core takes the small part of the reader it needs
 * (the query groups below), so a test can hand it a plain object.
 */

/** A row of the papers table, as the paper lists and the research search read it. */
export interface PaperRow {
  ordinal: number;
  work_id: number;
  doi: string | null;
  title: string | null;
  venue: string | null;
  year: number | null;
  pub_date: string | null;
  citations: number | null;
  impact_score: number | null;
  citation_percentile: number | null;
  cluster: number | null;
  elements: string;
  keywords: string;
}

/** The row's own columns; its impact score, percentile and community come from the whole-corpus columns. */
const PAPER_COLUMNS = 'ordinal, work_id, doi, title, venue, year, pub_date, citations, elements, keywords';
/** Before schema 4 (kept snapshots read pinned to their data_version), the rows held those too. */
const PAPER_COLUMNS_BEFORE_4 = `${PAPER_COLUMNS}, impact_score, citation_percentile, cluster`;

/**
 * The whole-corpus columns the reader reads (paper-columns.ts): a paper row's moving numbers, and
 * the papers in DOI order.
 */
export type ReaderColumn = 'impact_score' | 'citation_percentile' | 'cluster' | 'doi_order';

export interface ElementRow {
  id: string;
  name: string;
  paper_count: number;
  ri: number;
  ris: number;
  hri: number | null;
  /** JSON: atomic number, group, period. */
  extra: string;
}

export interface SubjectRow {
  type: SubjectType;
  id: string;
  name: string;
  description: string | null;
  paper_count: number;
  ri: number;
  ris: number;
  hri: number | null;
  total_ranked: number;
  /** JSON: a topic's field, subfield and domain. */
  extra: string;
}

/** A topic's or keyword's scores without its texts and ranked papers. */
export type SubjectScoreRow = Pick<
  SubjectRow,
  'type' | 'id' | 'name' | 'paper_count' | 'ri' | 'ris' | 'hri' | 'extra'
>;

/** A topic or keyword found by words of its name or description. */
export interface SubjectHit {
  type: 'topic' | 'keyword';
  id: string;
  name: string;
  paper_count: number;
  score: number;
}

export interface RoutedElementRow {
  rank: number;
  symbol: string;
  share: number;
}

/** A subject's ranked papers blob (see ranked.ts) and its counts. */
export interface RankedRow {
  ranked: Buffer;
  total_ranked: number;
  paper_count: number;
}

/** A paper matched by full text over titles: lower bm25 is better. */
export interface ScoredPaper {
  ordinal: number;
  score: number;
}

export interface CommunityRow {
  id: string;
  name: string;
  description: string | null;
  /** 1 when the community is rising. */
  rising: number;
}

export interface ElementCommunityRow {
  paper_count: number;
  rising: number;
}

/** A topic or keyword the lab can name. */
export interface LabSubjectRow {
  type: 'topic' | 'keyword';
  id: string;
  name: string;
  paperCount: number;
}

/** Elements, topics and keywords: their scores, routing and search by name. */
export interface SubjectQueries {
  /** Every element's row (118). */
  elementRows(): ElementRow[];
  subject(type: SubjectType, id: string): SubjectRow | undefined;
  /** Every topic's and keyword's scores, by type then id (the whole-table exports). */
  subjectScores(): SubjectScoreRow[];
  /** The elements a subject is routed to, rank 1 first. */
  routedElements(type: SubjectType, id: string): RoutedElementRow[];
  /** Topics and keywords whose name or description match an FTS expression, best first. */
  searchSubjects(match: string, limit: number): SubjectHit[];
  /** Which of `ids` (topic or keyword ids) match an FTS expression. */
  subjectsMatching(match: string, ids: readonly string[]): string[];
  /** Topics and keywords matching an FTS expression, counted up to `upTo` (a word's document frequency). */
  countSubjectMatches(match: string, upTo: number): number;
}

export interface HistoryQueries {
  /** A subject's stored series at a resolution (periods with papers only). */
  series(type: SubjectType, id: string, resolution: Resolution): StoredSeries | undefined;
  /** The corpus's high-impact papers per period of a resolution. */
  highImpactByPeriod(resolution: string): [string, number][];
}

/** A term's communities and their weights, as stored (topic, weight pairs, heaviest first). */
export interface TopicTerm {
  /** Its weight over every community (titles holding it, plus texts). */
  weight: number;
  topics: Int32Array;
}

/** Each community's titles and weight of terms, and the weight of every term in all. */
export interface TopicLengths {
  titles: Map<number, number>;
  weight: Map<number, number>;
  total: number;
}

/** The whole-corpus columns (paper-columns.ts reads them as typed arrays). */
export interface ColumnQueries {
  /** A whole-corpus column by ordinal, as a little-endian typed array's bytes. */
  paperColumn(name: string): Buffer | undefined;
}

export interface PaperQueries {
  /** Papers by ordinal, in no particular order; missing ones are left out. */
  paperRows(ordinals: readonly number[]): PaperRow[];
  rankedPapers(type: SubjectType, id: string): RankedRow | undefined;
  topicName(id: string): string | undefined;
}

export interface ResearchQueries extends ColumnQueries {
  /** Title matches of an FTS expression, best FTS5 bm25 first (core/research ranks them itself once it can). */
  titleMatches(match: string, limit: number): ScoredPaper[];
  /** The best `limit` of the newest `scan` title matches, by bm25. */
  newestTitleMatches(match: string, scan: number, limit: number): ScoredPaper[];
  /** Title matches, counted up to `upTo`. */
  countTitleMatches(match: string, upTo: number): number;
  /** Every title matching an FTS expression (from ordinal `from` on), ordinals ascending (what research's ranker ranks). */
  allTitleMatches(match: string, from?: number): number[];
  /** The newest `scan` titles matching an FTS expression, ordinals descending. */
  newestTitleOrdinals(match: string, scan: number): number[];
  /** The first `limit` title matches by ordinal, unranked (no bm25: no pass over each word's papers). */
  titleMatchOrdinals(match: string, limit: number): number[];
  /** Whether the snapshot has the titles by length (schema 9: papers_by_length). */
  hasTitlesByLength(): boolean;
  /**
   * The first `limit` (-1: every) titles of `fromTokens` to `throughTokens` tokens matching an FTS
   * expression, shortest first, then by ordinal (papers_by_length's order): their ordinals. With
   * `repeated`, in papers_repeats (the titles holding a term more than once). Schema 9 on.
   */
  titlesByLength(
    match: string,
    fromTokens: number,
    throughTokens: number,
    limit: number,
    repeated?: boolean,
  ): number[];
  /** Starts reading the titles' statistics (on a thread of their own) if not yet started. */
  startTitleRanking(): void;
  /** Whether the titles' statistics are being read now (starts reading them if not yet started). */
  titleRankingPending(): boolean;
  /**
   * What research ranks title matches with (core/research/title-ranking.ts), once the statistics
   * are read; undefined while they are being read, or when FTS5 ranks this snapshot (too few
   * papers, or the statistics could not be read). The first call starts reading them.
   */
  titleRanking(): TitleRanking | undefined;
  /** Whether a topic's name or description matches. */
  hasTopicMatch(match: string): boolean;
  paperByDoi(doi: string): PaperRow | undefined;
  /** Up to 10 topics whose name or description match, best first. */
  describedTopics(match: string): string[];
  /** Every community's papers (its topic's primary papers), by topic number; read once. */
  communitySizes(): Map<number, number>;
  /** Each paper's topics (its primary one first), by ordinal; missing papers are left out. */
  paperTopics(ordinals: readonly number[]): Map<number, string[]>;
  /** Up to `limit` topics whose name or description (keywords included) match, best bm25 first. */
  topicTextMatches(match: string, limit: number): TopicMatch[];
  /** Which of the topics' search rows `rows` (topicTextMatches' `row`) match an FTS expression (looked up by row: fast). */
  searchRowsMatching(match: string, rows: readonly number[]): number[];
  community(topicId: string): CommunityRow | undefined;
  /** A question word as the titles' index holds it (stemmed), or null when it is not one term. */
  titleTerm(word: string): string | null;
  /** The communities of title terms (snapshot-build/topic-terms.ts); terms not held are left out. */
  topicTerms(terms: readonly string[]): Map<string, TopicTerm>;
  /** Each community's titles and terms' weight; null before schema 7 (no topic model). */
  topicLengths(): TopicLengths | null;
  elementCommunity(symbol: string, topicId: string): ElementCommunityRow | undefined;
}

export interface LabQueries extends ColumnQueries {
  /** Whether the snapshot has the lab's tables (schema 2). */
  hasLabTables(): boolean;
  /** Topics and keywords, most papers first. */
  labSubjects(): LabSubjectRow[];
  /** A subject's papers as little-endian int32 ordinals, ascending. */
  postings(type: SubjectType, id: string): Buffer | undefined;
}

/** A publication whose changes a snapshot holds (schema 10: change_publications). */
export interface ChangePublicationRow {
  /** 0: the snapshot's own; 1: the one before; ... */
  publication: number;
  /** Its data_version; null for the snapshot's own (a file cannot hold its own hash). */
  version: string | null;
  /** The data version it was compared with. */
  since: string;
  changes: number;
}

/** One subject's move in one publication (schema 10: changes); before or after null for a subject new or gone. */
export interface ChangeRow {
  publication: number;
  type: SubjectType;
  id: string;
  name: string;
  ri_before: number | null;
  ri_after: number | null;
  ris_before: number | null;
  ris_after: number | null;
  hri_before: number | null;
  hri_after: number | null;
  rank_before: number | null;
  rank_after: number | null;
  rising_before: number | null;
  rising_after: number | null;
}

/** What moved per subject at each publication the snapshot holds (snapshot-build/changes.ts). */
export interface ChangeQueries {
  /** The publications, own (0) first; none before schema 10 or for a folder's first snapshot. */
  changePublications(): ChangePublicationRow[];
  /** The changes of publications 0..upTo, of these kinds, or of one subject. */
  changeRows(upTo: number, of: { types: readonly string[] } | { type: string; id: string }): ChangeRow[];
}

export interface SnapshotReader
  extends SubjectQueries,
    ChangeQueries,
    HistoryQueries,
    PaperQueries,
    ResearchQueries,
    LabQueries {
  /** The snapshot's meta table (data window, cut-off, counts). */
  meta(): Record<string, string>;
}

/**
 * What the core reads of an open snapshot: its version and meta, the queries (all of them, or the
 * group a module needs), and a memo for answers derived once per snapshot. `Snapshot` is one.
 */
export interface SnapshotView<R = SnapshotReader> {
  readonly version: string;
  readonly meta: Readonly<Record<string, string>>;
  readonly reader: R;
  memoize<T>(key: string, compute: () => T): T;
  /** Drops a memoized value (it is computed again on the next memoize). */
  forget?(key: string): void;
}

/** The part of a snapshot every answer's envelope names. */
export type SnapshotStamp = Pick<SnapshotView, 'version' | 'meta'>;

type Mode = 'rows' | 'pluck' | 'raw';

/** Snapshots of fewer papers are ranked by FTS5 alone (see SqliteSnapshotReader). */
export const TITLE_RANKING_FROM = 100_000;

export interface TitleRankingOptions {
  fromPapers?: number;
  fewMatches?: number;
}

/** The titles' statistics, and below how many possible matches FTS5 ranks all the same. */
export interface TitleRanking {
  stats: TitleStats;
  fewMatches?: number;
}

/**
 * Facts a snapshot never changes, kept once read: per-word match counts and community rows, which
 * research questions ask again and again (common words, the big communities). Bounded: questions
 * bring any words, so the memo starts over when full.
 */
class Memo<V> {
  private readonly known = new Map<string, V>();
  constructor(private readonly max: number) {}

  get(key: string, read: () => V): V {
    if (this.known.has(key)) return this.known.get(key) as V;
    const value = read();
    if (this.known.size >= this.max) this.known.clear();
    this.known.set(key, value);
    return value;
  }
}

/** The reader over a better-sqlite3 connection; statements are prepared on first use and kept. */
export class SqliteSnapshotReader implements SnapshotReader {
  private readonly prepared = new Map<string, Database.Statement>();
  /** Per-word facts (title and topic matches, counted up to a bound) by expression and bound. */
  private readonly wordFacts = new Memo<number>(20_000);
  private readonly communities = new Memo<CommunityRow | undefined>(20_000);
  private readonly elementCommunities = new Memo<ElementCommunityRow | undefined>(20_000);

  /**
   * The titles' statistics once read (in a thread of their own, started by the first ranked
   * search), for research to rank title matches with; FTS5's bm25 ranks until then, or when they
   * cannot be read.
   */
  private ranking: TitleRanking | 'failed' | 'fts5' | undefined;
  private titleStats: PendingTitleStats | undefined;
  private schemaVersion: number | undefined;

  constructor(
    private readonly db: Database.Database,
    /** A whole-corpus column of this snapshot, read once and kept (the snapshot's memo). */
    private readonly column: (name: ReaderColumn) => ArrayLike<number>,
    /**
     * From how many papers the title ranker is used (below it FTS5's bm25 ranks a question in a
     * few milliseconds at most, and no thread reads statistics), and its own bound (tests lower
     * both to rank the small sample).
     */
    private readonly titleRankingOptions: TitleRankingOptions = {},
  ) {}

  /** Stops reading the titles' statistics (the snapshot is being closed). */
  close(): void {
    this.titleStats?.stop();
  }

  titleRanking(): TitleRanking | undefined {
    if (this.ranking === undefined) {
      const from = this.titleRankingOptions.fromPapers ?? TITLE_RANKING_FROM;
      if (!this.titleStats && Number(this.meta().corpus_papers ?? 0) < from) {
        this.ranking = 'fts5';
        return undefined;
      }
      this.titleStats ??= startTitleStats(this.db.name);
      const stats = this.titleStats.take();
      if (stats === 'failed') this.ranking = 'failed';
      else if (stats) {
        const { fewMatches } = this.titleRankingOptions;
        this.ranking = fewMatches === undefined ? { stats } : { stats, fewMatches };
      }
    }
    return typeof this.ranking === 'object' ? this.ranking : undefined;
  }

  startTitleRanking(): void {
    this.titleRanking();
  }

  titleRankingPending(): boolean {
    this.titleRanking();
    return this.ranking === undefined;
  }

  /** Starts reading the titles' statistics if not yet started; true once they are read (benchmarks). */
  async titleRankingReady(): Promise<boolean> {
    while (this.titleRankingPending()) await new Promise((resolve) => setTimeout(resolve, 20));
    return typeof this.ranking === 'object';
  }

  allTitleMatches(match: string, from = 0): number[] {
    // The bound as an integer (a JavaScript number binds as a real, which FTS5 does not take as a
    // row id bound).
    const json = this.statement(
      'SELECT json_group_array(rowid) FROM papers_fts WHERE papers_fts MATCH ? AND rowid >= ?',
      'pluck',
    ).get(match, BigInt(from)) as string;
    return JSON.parse(json) as number[];
  }

  newestTitleOrdinals(match: string, scan: number): number[] {
    const json = this.statement(
      'SELECT json_group_array(rowid) FROM (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? ORDER BY rowid DESC LIMIT ?)',
      'pluck',
    ).get(match, scan) as string;
    return JSON.parse(json) as number[];
  }

  /** The statement of `sql`, prepared once (each SQL text is used in one mode). */
  private statement(sql: string, mode: Mode = 'rows'): Database.Statement {
    let s = this.prepared.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      if (mode === 'pluck') s.pluck();
      else if (mode === 'raw') s.raw();
      this.prepared.set(sql, s);
    }
    return s;
  }

  meta(): Record<string, string> {
    const rows = this.statement('SELECT key, value FROM meta').all() as { key: string; value: string }[];
    return Object.fromEntries(rows.map((r) => [r.key, r.value]));
  }

  elementRows(): ElementRow[] {
    return this.statement(
      "SELECT id, name, paper_count, ri, ris, hri, extra FROM subjects WHERE type = 'element'",
    ).all() as ElementRow[];
  }

  subjectScores(): SubjectScoreRow[] {
    return this.statement(
      "SELECT type, id, name, paper_count, ri, ris, hri, extra FROM subjects WHERE type IN ('topic', 'keyword') ORDER BY type, id",
    ).all() as SubjectScoreRow[];
  }

  changePublications(): ChangePublicationRow[] {
    if (this.schema < 10) return [];
    return this.statement(
      'SELECT publication, version, since, changes FROM change_publications ORDER BY publication',
    ).all() as ChangePublicationRow[];
  }

  changeRows(upTo: number, of: { types: readonly string[] } | { type: string; id: string }): ChangeRow[] {
    if (this.schema < 10 || upTo < 0) return [];
    if ('id' in of)
      return this.statement(
        'SELECT * FROM changes WHERE type = ? AND id = ? AND publication <= ? ORDER BY publication',
      ).all(of.type, of.id, upTo) as ChangeRow[];
    // One statement per set of kinds (at most seven), in the table's key order.
    const kinds = [...of.types].sort();
    return this.statement(
      `SELECT * FROM changes WHERE publication <= ? AND type IN (${kinds.map(() => '?').join(', ')}) ORDER BY publication, type, id`,
    ).all(upTo, ...kinds) as ChangeRow[];
  }

  subject(type: SubjectType, id: string): SubjectRow | undefined {
    return this.statement(
      'SELECT type, id, name, description, paper_count, ri, ris, hri, total_ranked, extra FROM subjects WHERE type = ? AND id = ?',
    ).get(type, id) as SubjectRow | undefined;
  }

  routedElements(type: SubjectType, id: string): RoutedElementRow[] {
    return this.statement(
      'SELECT rank, symbol, share FROM routed_elements WHERE type = ? AND id = ? ORDER BY rank',
    ).all(type, id) as RoutedElementRow[];
  }

  searchSubjects(match: string, limit: number): SubjectHit[] {
    return this.statement(
      `SELECT s.type, s.id, s.name, s.paper_count, bm25(subjects_fts, 0, 0, 10.0, 1.0) AS score
         FROM subjects_fts JOIN subjects s ON s.type = subjects_fts.type AND s.id = subjects_fts.id
         WHERE subjects_fts MATCH ? AND subjects_fts.type IN ('topic', 'keyword')
         ORDER BY score, s.paper_count DESC, s.id LIMIT ?`,
    ).all(match, limit) as SubjectHit[];
  }

  subjectsMatching(match: string, ids: readonly string[]): string[] {
    return this.statement(
      "SELECT id FROM subjects_fts WHERE subjects_fts MATCH ? AND type IN ('topic', 'keyword') AND id IN (SELECT value FROM json_each(?))",
      'pluck',
    ).all(match, JSON.stringify(ids)) as string[];
  }

  countSubjectMatches(match: string, upTo: number): number {
    return this.wordFacts.get(
      `subject ${upTo} ${match}`,
      () =>
        this.statement(
          "SELECT count(*) FROM (SELECT 1 FROM subjects_fts WHERE subjects_fts MATCH ? AND type IN ('topic', 'keyword') LIMIT ?)",
          'pluck',
        ).get(match, upTo) as number,
    );
  }

  series(type: SubjectType, id: string, resolution: Resolution): StoredSeries | undefined {
    const blob = this.statement(
      'SELECT series FROM history WHERE type = ? AND id = ? AND resolution = ?',
      'pluck',
    ).get(type, id, resolution) as Buffer | string | undefined;
    if (blob === undefined) return undefined;
    // JSON before schema 5 (kept snapshots read pinned to their data_version).
    return typeof blob === 'string' ? (JSON.parse(blob) as StoredSeries) : decodeSeries(blob, resolution);
  }

  highImpactByPeriod(resolution: string): [string, number][] {
    return this.statement('SELECT period, high_impact_papers FROM periods WHERE resolution = ?', 'raw').all(
      resolution,
    ) as [string, number][];
  }

  paperRows(ordinals: readonly number[]): PaperRow[] {
    const rows = this.statement(
      `SELECT ${this.paperColumns} FROM papers WHERE ordinal IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify(ordinals)) as PaperRow[];
    for (const row of rows) this.addMovingNumbers(row);
    return rows;
  }

  /** The snapshot's schema version (its meta), read once. */
  private get schema(): number {
    this.schemaVersion ??= Number(this.meta().schema_version ?? 0);
    return this.schemaVersion;
  }

  private get paperColumns(): string {
    return this.schema < 4 ? PAPER_COLUMNS_BEFORE_4 : PAPER_COLUMNS;
  }

  /** A row as read, with the numbers that move with the corpus taken from the columns (schema 4 on). */
  private addMovingNumbers(row: PaperRow | undefined): PaperRow | undefined {
    if (!row || this.schema < 4) return row;
    const p = row.ordinal;
    const impact = this.column('impact_score')[p]!;
    const percentile = this.column('citation_percentile')[p]!;
    const cluster = this.column('cluster')[p]!;
    row.impact_score = Number.isNaN(impact) ? null : impact;
    row.citation_percentile = Number.isNaN(percentile) ? null : percentile;
    row.cluster = cluster === -1 ? null : cluster;
    return row;
  }

  rankedPapers(type: SubjectType, id: string): RankedRow | undefined {
    return this.statement(
      'SELECT ranked, total_ranked, paper_count FROM subjects WHERE type = ? AND id = ?',
    ).get(type, id) as RankedRow | undefined;
  }

  topicName(id: string): string | undefined {
    return this.statement("SELECT name FROM subjects WHERE type = 'topic' AND id = ?", 'pluck').get(id) as
      | string
      | undefined;
  }

  titleMatches(match: string, limit: number): ScoredPaper[] {
    return this.statement(
      'SELECT rowid AS ordinal, bm25(papers_fts) AS score FROM papers_fts WHERE papers_fts MATCH ? ORDER BY score LIMIT ?',
    ).all(match, limit) as ScoredPaper[];
  }

  newestTitleMatches(match: string, scan: number, limit: number): ScoredPaper[] {
    return this.statement(
      'SELECT ordinal, score FROM (SELECT rowid AS ordinal, bm25(papers_fts) AS score FROM papers_fts WHERE papers_fts MATCH ? ORDER BY rowid DESC LIMIT ?) ORDER BY score LIMIT ?',
    ).all(match, scan, limit) as ScoredPaper[];
  }

  hasTitlesByLength(): boolean {
    return this.schema >= 9;
  }

  titlesByLength(
    match: string,
    fromTokens: number,
    throughTokens: number,
    limit: number,
    repeated = false,
  ): number[] {
    // The bounds as integers (a JavaScript number binds as a real, which FTS5 does not take as a
    // row id bound: it would read every match).
    const table = repeated ? 'papers_repeats' : 'papers_by_length';
    const shift = BigInt(BY_LENGTH_SHIFT);
    const rowids = this.statement(
      `SELECT rowid FROM ${table} WHERE ${table} MATCH ? AND rowid >= ? AND rowid < ? LIMIT ?`,
      'pluck',
    ).all(match, BigInt(fromTokens) * shift, BigInt(throughTokens + 1) * shift, limit) as number[];
    for (let i = 0; i < rowids.length; i++) rowids[i] = rowids[i]! % BY_LENGTH_SHIFT;
    return rowids;
  }

  titleMatchOrdinals(match: string, limit: number): number[] {
    return this.statement('SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? LIMIT ?', 'pluck').all(
      match,
      limit,
    ) as number[];
  }

  countTitleMatches(match: string, upTo: number): number {
    return this.wordFacts.get(
      `title ${upTo} ${match}`,
      () =>
        this.statement(
          'SELECT count(*) FROM (SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? LIMIT ?)',
          'pluck',
        ).get(match, upTo) as number,
    );
  }

  hasTopicMatch(match: string): boolean {
    return (
      this.wordFacts.get(
        `topic ${match}`,
        () =>
          this.topicSearcher?.matching(match)?.size ??
          (this.statement(`SELECT count(*) FROM (SELECT 1 FROM ${this.topicSearch} LIMIT 1)`, 'pluck').get(
            match,
          ) as number),
      ) > 0
    );
  }

  paperByDoi(doi: string): PaperRow | undefined {
    // Snapshots before schema 6 have an index on doi instead of the column.
    if (this.schema < 6) {
      return this.addMovingNumbers(
        this.statement(`SELECT ${this.paperColumns} FROM papers WHERE doi = ?`).get(doi) as
          | PaperRow
          | undefined,
      );
    }
    // The first paper in DOI order whose DOI is not below this one (no DOI counts as above all).
    const order = this.column('doi_order');
    const doiAt = this.statement('SELECT doi FROM papers WHERE ordinal = ?', 'pluck');
    const wanted = Buffer.from(doi);
    const below = (i: number) => {
      const d = doiAt.get(order[i]) as string | null;
      return d !== null && Buffer.compare(Buffer.from(d), wanted) < 0;
    };
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (below(mid)) lo = mid + 1;
      else hi = mid;
    }
    if (lo === order.length || doiAt.get(order[lo]) !== doi) return undefined;
    return this.paperRows([order[lo]!])[0];
  }

  describedTopics(match: string): string[] {
    // Ranked as topicTextMatches ranks them (bm25 over topics_fts alone would rank them otherwise).
    if (this.schema >= 8) return this.topicTextMatches(match, 10).map((m) => m.id);
    return this.statement(
      "SELECT id FROM subjects_fts WHERE subjects_fts MATCH ? AND type = 'topic' ORDER BY bm25(subjects_fts, 0, 0, 5.0, 1.0) LIMIT 10",
      'pluck',
    ).all(match) as string[];
  }

  private sizes: Map<number, number> | undefined;
  communitySizes(): Map<number, number> {
    this.sizes ??= new Map(
      (
        this.statement('SELECT topic_id, paper_count FROM communities', 'raw').all() as [string, number][]
      ).map(([id, n]) => [Number(id.slice(1)), n]),
    );
    return this.sizes;
  }

  paperTopics(ordinals: readonly number[]): Map<number, string[]> {
    const rows = this.statement(
      'SELECT ordinal, topics FROM papers WHERE ordinal IN (SELECT value FROM json_each(?))',
      'raw',
    ).all(JSON.stringify(ordinals)) as [number, string][];
    return new Map(rows.map(([o, t]) => [o, t ? t.split(',') : []]));
  }

  private topicSearchTerms: TopicSearch | undefined;
  /** Research's topic search from subject_terms (schema 8 on), made on first use. */
  private get topicSearcher(): TopicSearch | undefined {
    if (this.schema < 8) return undefined;
    this.topicSearchTerms ??= new TopicSearch(this.db);
    return this.topicSearchTerms;
  }

  topicTextMatches(match: string, limit: number): TopicMatch[] {
    const ranked = this.topicSearcher?.rank(match, limit);
    if (ranked) return ranked;
    // Ranked by FTS5 in subjects_fts (the same rowids as topics_fts's).
    return this.statement(
      "SELECT id, rowid AS row, bm25(subjects_fts, 0, 0, 5.0, 1.0) AS score FROM subjects_fts WHERE subjects_fts MATCH ? AND type = 'topic' ORDER BY score, id LIMIT ?",
    ).all(match, limit) as TopicMatch[];
  }

  searchRowsMatching(match: string, rows: readonly number[]): number[] {
    const matching = this.topicSearcher?.matching(match);
    if (matching) return rows.filter((r) => matching.has(r)).sort((a, b) => a - b);
    return this.statement(
      `SELECT rowid FROM ${this.topicSearch} AND rowid IN (SELECT value FROM json_each(?))`,
      'pluck',
    ).all(match, JSON.stringify(rows)) as number[];
  }

  /**
   * The topics' texts to search (a MATCH on one parameter): topics_fts from schema 8; before it
   * the topics' rows of subjects_fts, whose posting lists hold the keywords' rows too (the same
   * rowids either way).
   */
  private get topicSearch(): string {
    return this.schema < 8
      ? "subjects_fts WHERE subjects_fts MATCH ? AND type = 'topic'"
      : 'topics_fts WHERE topics_fts MATCH ?';
  }

  community(topicId: string): CommunityRow | undefined {
    return this.communities.get(
      topicId,
      () =>
        this.statement(
          "SELECT s.id, s.name, s.description, coalesce(c.rising, 0) AS rising FROM subjects s LEFT JOIN communities c ON c.topic_id = s.id WHERE s.type = 'topic' AND s.id = ?",
        ).get(topicId) as CommunityRow | undefined,
    );
  }

  titleTerm(word: string): string | null {
    return titleTerm(word);
  }

  topicTerms(terms: readonly string[]): Map<string, TopicTerm> {
    const out = new Map<string, TopicTerm>();
    if (terms.length === 0 || this.schema < 7) return out;
    const rows = this.statement(
      'SELECT term, weight, topics FROM topic_terms WHERE term IN (SELECT value FROM json_each(?))',
      'raw',
    ).all(JSON.stringify(terms)) as [string, number, Buffer][];
    for (const [term, weight, blob] of rows) {
      // Copied out of the row's buffer, aligned for an Int32Array.
      const topics = new Int32Array(blob.byteLength >> 2);
      Buffer.from(topics.buffer).set(blob);
      out.set(term, { weight, topics });
    }
    return out;
  }

  private lengths: TopicLengths | null | undefined;
  topicLengths(): TopicLengths | null {
    if (this.lengths === undefined) {
      if (this.schema < 7) this.lengths = null;
      else {
        const titles = new Map<number, number>();
        const weight = new Map<number, number>();
        let total = 0;
        for (const [topic, n, w] of this.statement(
          'SELECT topic, titles, weight FROM topic_lengths',
          'raw',
        ).iterate() as Iterable<[number, number, number]>) {
          titles.set(topic, n);
          weight.set(topic, w);
          total += w;
        }
        this.lengths = { titles, weight, total };
      }
    }
    return this.lengths;
  }

  elementCommunity(symbol: string, topicId: string): ElementCommunityRow | undefined {
    return this.elementCommunities.get(
      `${symbol} ${topicId}`,
      () =>
        this.statement(
          'SELECT paper_count, rising FROM element_communities WHERE symbol = ? AND topic_id = ?',
        ).get(symbol, topicId) as ElementCommunityRow | undefined,
    );
  }

  hasLabTables(): boolean {
    return (
      this.statement(
        "SELECT count(*) FROM sqlite_master WHERE name IN ('paper_columns', 'postings')",
        'pluck',
      ).get() === 2
    );
  }

  paperColumn(name: string): Buffer | undefined {
    // Once per column and snapshot (paperColumn memoizes it): no cached statement.
    return readPaperColumnBytes(this.db, name);
  }

  labSubjects(): LabSubjectRow[] {
    return this.statement(
      "SELECT type, id, name, paper_count AS paperCount FROM subjects WHERE type IN ('topic', 'keyword') ORDER BY paper_count DESC, type, id",
    ).all() as LabSubjectRow[];
  }

  postings(type: SubjectType, id: string): Buffer | undefined {
    return this.statement('SELECT ordinals FROM postings WHERE type = ? AND id = ?', 'pluck').get(type, id) as
      | Buffer
      | undefined;
  }
}

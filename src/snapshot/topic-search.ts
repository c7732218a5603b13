import type Database from 'better-sqlite3';
import { BM25_B as B, bm25Idf, bm25TermScore, BM25_K1 as K1 } from './bm25.js';
import { alternativesOf } from './fts-expression.js';
import { type Stemmer, stemmerOf } from './title-terms.js';

/**
 * Research's search of the topics' texts (reader.topicTextMatches) ranked by the bm25 subjects_fts
 * gives the topics' rows (name 5, description 1): the number FTS5 computes (sqlite's fts5_aux.c,
 * as core/research/title-ranking.ts computes it for titles), from subjects_fts's row and token
 * counts and each term's rows there (subject_terms), and from topics_fts each topic's tokens and
 * weighted count of the term. Over topics_fts alone FTS5's bm25 would weigh words and lengths
 * otherwise and choose other topics at the edge of the best few; this way the answers are those
 * of the mixed table, from the topics' posting lists alone.
 *
 * A term's weighted count in each topic is read back from FTS5's bm25 of the term alone in
 * topics_fts (every quantity of it but the count is known: the count is the bm25 solved for it,
 * an integer, so rounding takes out the floating point's error). Its rows also say which topics
 * match a phrase of one term, and so which match an expression (searchRowsMatching,
 * hasTopicMatch): a row matches an alternative (a conjunction) when it holds all its terms. A
 * phrase counts in a row when its alternative matches the row. Expressions of the shape research
 * builds (alternatives ORed, each phrase one term) are taken; anything else answers undefined,
 * and FTS5 searches it.
 */

/** The SQLite varints of an FTS5 record, one after another. */
function varints(b: Uint8Array): number[] {
  const out: number[] = [];
  let v = 0;
  for (const byte of b) {
    v = v * 128 + (byte & 0x7f);
    if (byte < 0x80) {
      out.push(v);
      v = 0;
    }
  }
  return out;
}

export interface TopicMatch {
  id: string;
  row: number;
  score: number;
}

/** A term's idf in subjects_fts, and each topics' row holding it: its weighted count. */
interface TermRows {
  idf: number;
  topics: Map<number, number>;
  /** Its rows and each one's part of a bm25 score (rank), made when first needed. */
  scored?: { rows: Int32Array; parts: Float64Array };
}

/** The rows an alternative (a conjunction) matches: every one of its terms is in them. */
function rowsMatching(alt: readonly TermRows[]): number[] {
  const rarest = alt.reduce((a, b) => (b.topics.size < a.topics.size ? b : a));
  const rows: number[] = [];
  for (const row of rarest.topics.keys()) if (alt.every((t) => t.topics.has(row))) rows.push(row);
  return rows;
}

/** An FTS5 table's averages record (its rowid 1): its rows and tokens in all. */
function averages(db: Database.Database, table: string): { rows: number; avgdl: number } {
  const [rows = 0, ...columns] = varints(
    db.prepare(`SELECT block FROM ${table}_data WHERE id = 1`).pluck().get() as Buffer,
  );
  return { rows, avgdl: columns.reduce((a, b) => a + b, 0) / rows };
}

export class TopicSearch {
  private readonly stemmer: Stemmer;
  private readonly subjects: { rows: number; avgdl: number };
  private readonly topicTexts: { rows: number; avgdl: number };
  /** Each topics_fts row's id and tokens (all columns), by rowid. */
  private readonly topics = new Map<number, { id: string; tokens: number }>();
  /** The terms read, up to 5,000 (all of the sample's topics' terms took 3.4 MB). */
  private readonly terms = new Map<string, TermRows>();
  private readonly subjectRows: Database.Statement;
  private readonly topicScores: Database.Statement;
  /** Each row's score being summed by rank(), and whether it is in the sum yet (by rowid). */
  private readonly sums: Float64Array;
  private readonly summing: Uint8Array;

  constructor(db: Database.Database) {
    const definition = db
      .prepare("SELECT sql FROM sqlite_master WHERE name = 'topics_fts'")
      .pluck()
      .get() as string;
    this.stemmer = stemmerOf(/tokenize\s*=\s*'([^']*)'/.exec(definition)?.[1] ?? 'unicode61');
    this.subjects = averages(db, 'subjects_fts');
    this.topicTexts = averages(db, 'topics_fts');
    const sizes = db.prepare('SELECT id, sz FROM topics_fts_docsize').raw().iterate() as Iterable<
      [number, Buffer]
    >;
    const tokens = new Map<number, number>();
    for (const [row, sz] of sizes)
      tokens.set(
        row,
        varints(sz).reduce((a, b) => a + b, 0),
      );
    for (const [row, id] of db.prepare('SELECT rowid, id FROM topics_fts').raw().iterate() as Iterable<
      [number, string]
    >)
      this.topics.set(row, { id, tokens: tokens.get(row) ?? 0 });
    const lastRow = Math.max(0, ...this.topics.keys());
    this.sums = new Float64Array(lastRow + 1);
    this.summing = new Uint8Array(lastRow + 1);
    this.subjectRows = db.prepare('SELECT rows FROM subject_terms WHERE term = ?').pluck();
    this.topicScores = db
      .prepare('SELECT rowid, bm25(topics_fts, 0, 5.0, 1.0) FROM topics_fts WHERE topics_fts MATCH ?')
      .raw();
  }

  private idf(rows: number, hits: number): number {
    return bm25Idf(this.stemmer.ln, rows, hits);
  }

  /** A phrase's term (`term`, its stem) as research ranks by it: its idf and weighted counts. */
  private term(phrase: string, term: string): TermRows {
    let t = this.terms.get(term);
    if (t === undefined) {
      const hits = (this.subjectRows.get(term) as number | undefined) ?? 0;
      const scored = this.topicScores.all(`"${phrase}"`) as [number, number][];
      // bm25 = -idf f (K1 + 1) / (f + K1 k), k = 1 - B + B d / avgdl: f = K1 k s / (K1 + 1 - s), s = -bm25 / idf.
      const idf = this.idf(this.topicTexts.rows, scored.length);
      const topics = new Map<number, number>();
      for (const [row, score] of scored) {
        const k = 1 - B + (B * this.topics.get(row)!.tokens) / this.topicTexts.avgdl;
        const s = -score / idf;
        topics.set(row, Math.round((K1 * k * s) / (K1 + 1 - s)));
      }
      t = { idf: this.idf(this.subjects.rows, hits), topics };
      if (this.terms.size >= 5_000) this.terms.clear();
      this.terms.set(term, t);
    }
    return t;
  }

  /** `expr`'s alternatives as their terms, or undefined when it is not of the shape taken here. */
  private alternatives(expr: string): TermRows[][] | undefined {
    const alternatives = alternativesOf(expr);
    if (!alternatives) return undefined;
    const stems = alternatives.map((alt) => alt.map((p) => this.stemmer.stem(p)));
    if (stems.some((alt) => alt.some((t) => t === null))) return undefined;
    return (stems as string[][]).map((alt, a) => alt.map((t, i) => this.term(alternatives[a]![i]!, t)));
  }

  /** The rows some alternative matches. */
  private static matched(terms: TermRows[][]): Set<number> {
    const matched = new Set<number>();
    for (const alt of terms) for (const row of rowsMatching(alt)) matched.add(row);
    return matched;
  }

  /**
   * The topics' rows matching `expr` (as FTS5 matches a phrase of one term: the row holds it), or
   * undefined when FTS5 must search it.
   */
  matching(expr: string): Set<number> | undefined {
    const terms = this.alternatives(expr);
    return terms && TopicSearch.matched(terms);
  }

  /** A term's part of the bm25 score of a row holding it `f` times. */
  private part(t: TermRows, row: number, f: number): number {
    return bm25TermScore(t.idf, f, this.topics.get(row)!.tokens, this.subjects.avgdl);
  }

  /** A term's rows and their parts, worked out once per term. */
  private partsOf(t: TermRows): { rows: Int32Array; parts: Float64Array } {
    if (!t.scored) {
      const rows = Int32Array.from(t.topics.keys());
      t.scored = { rows, parts: Float64Array.from(rows, (row) => this.part(t, row, t.topics.get(row)!)) };
    }
    return t.scored;
  }

  /**
   * The best `limit` topics matching `expr` by bm25, ties by id, or undefined when FTS5 must rank
   * them. Each row's score is summed alternative by alternative and term by term, in the
   * expression's order as FTS5 sums its phrases, so the sums are FTS5's to the bit; a one-term
   * alternative (most of them) adds its parts worked out once. The best are kept as they come
   * rather than all matches sorted.
   */
  rank(expr: string, limit: number): TopicMatch[] | undefined {
    const terms = this.alternatives(expr);
    if (!terms) return undefined;
    const { sums, summing } = this;
    const touched: number[] = [];
    const add = (row: number, part: number) => {
      if (summing[row] === 0) {
        summing[row] = 1;
        sums[row] = 0;
        touched.push(row);
      }
      sums[row] = sums[row]! + part;
    };
    for (const alt of terms) {
      if (alt.length === 1) {
        const { rows, parts } = this.partsOf(alt[0]!);
        for (let i = 0; i < rows.length; i++) add(rows[i]!, parts[i]!);
        continue;
      }
      // A conjunction's phrases count only where all of them are.
      for (const row of rowsMatching(alt))
        for (const t of alt) add(row, this.part(t, row, t.topics.get(row)!));
    }
    const id = (row: number) => this.topics.get(row)!.id;
    // Ascending (score, id), with score as FTS5 gives it (the sum negated).
    const before = (a: number, b: number) =>
      -1.0 * sums[a]! - -1.0 * sums[b]! || (id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0);
    const best: number[] = [];
    for (const row of touched) {
      summing[row] = 0;
      if (limit <= 0) continue;
      if (best.length === limit && before(row, best[best.length - 1]!) >= 0) continue;
      let at = best.length;
      while (at > 0 && before(row, best[at - 1]!) < 0) at--;
      best.splice(at, 0, row);
      if (best.length > limit) best.pop();
    }
    return best.map((row) => ({ id: id(row), row, score: -1.0 * sums[row]! }));
  }
}

import type Database from 'better-sqlite3';
import { alternativesOf } from './fts-expression.js';
import { type Stemmer, stemmerOf } from './title-terms.js';

/**
 * Research's search of the topics' texts (reader.topicTextMatches) ranked by the bm25 subjects_fts
 * gives the topics' rows (name 5, description 1): the number FTS5 computes (sqlite's fts5_aux.c,
 * as core/research/title-ranking.ts computes it for titles), from subjects_fts's row and token
 * counts, each term's rows there and the topics' rows holding it (subject_terms) and their sizes
 * (topics_fts's). Over topics_fts alone FTS5's bm25 would weigh words and lengths otherwise and
 * choose other topics at the edge of the best few; this way the answers are those of the mixed
 * table, from one row a word.
 *
 * A phrase counts in a row when its alternative (a conjunction) matches the row, as often as
 * the row holds it, each instance weighing its column's weight. Expressions of the shape
 * topicTextMatches is asked (alternatives ORed, each phrase one term) are taken; anything else
 * answers undefined, and FTS5 ranks it in subjects_fts.
 */

const K1 = 1.2;
const B = 0.75;

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

/** A term's rows in subjects_fts, and each topics' row holding it: its weighted instances. */
interface TermRows {
  idf: number;
  topics: Map<number, number>;
}

export class TopicSearch {
  private readonly stemmer: Stemmer;
  private readonly rows: number;
  private readonly avgdl: number;
  /** Each topics_fts row's id and tokens (all columns), by rowid. */
  private readonly topics = new Map<number, { id: string; tokens: number }>();
  private readonly terms = new Map<string, TermRows>();
  private readonly termRows: Database.Statement;

  constructor(db: Database.Database) {
    const definition = db
      .prepare("SELECT sql FROM sqlite_master WHERE name = 'topics_fts'")
      .pluck()
      .get() as string;
    this.stemmer = stemmerOf(/tokenize\s*=\s*'([^']*)'/.exec(definition)?.[1] ?? 'unicode61');
    // subjects_fts's averages record (its rowid 1): its rows, then each column's tokens.
    const [rows = 0, ...columns] = varints(
      db.prepare('SELECT block FROM subjects_fts_data WHERE id = 1').pluck().get() as Buffer,
    );
    this.rows = rows;
    this.avgdl = columns.reduce((a, b) => a + b, 0) / rows;
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
    this.termRows = db.prepare('SELECT rows, topics FROM subject_terms WHERE term = ?').raw();
  }

  private term(term: string): TermRows {
    let t = this.terms.get(term);
    if (t === undefined) {
      const [hits, blob] = (this.termRows.get(term) as [number, Buffer] | undefined) ?? [0, Buffer.alloc(0)];
      let idf = this.stemmer.ln((this.rows - hits + 0.5) / (hits + 0.5));
      if (idf <= 0) idf = 1e-6;
      const topics = new Map<number, number>();
      for (let i = 0; i + 8 <= blob.byteLength; i += 8)
        topics.set(blob.readInt32LE(i), blob.readInt32LE(i + 4));
      t = { idf, topics };
      if (this.terms.size >= 20_000) this.terms.clear();
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
    return (stems as string[][]).map((alt) => alt.map((t) => this.term(t)));
  }

  /** The rows some alternative matches: every one of its terms is in them. */
  private static matched(terms: TermRows[][]): Set<number> {
    const matched = new Set<number>();
    for (const alt of terms) {
      const rarest = alt.reduce((a, b) => (b.topics.size < a.topics.size ? b : a));
      for (const row of rarest.topics.keys()) if (alt.every((t) => t.topics.has(row))) matched.add(row);
    }
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

  /** The best `limit` topics matching `expr` by bm25, ties by id, or undefined when FTS5 must rank them. */
  rank(expr: string, limit: number): TopicMatch[] | undefined {
    const terms = this.alternatives(expr);
    if (!terms) return undefined;
    const matched = TopicSearch.matched(terms);
    const out: TopicMatch[] = [];
    for (const row of matched) {
      const topic = this.topics.get(row)!;
      const d = topic.tokens;
      let score = 0;
      for (const alt of terms) {
        // A conjunction's phrases count only where all of them are.
        if (!alt.every((t) => t.topics.has(row))) continue;
        for (const t of alt) {
          const f = t.topics.get(row)!;
          score += t.idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * d) / this.avgdl)));
        }
      }
      out.push({ id: topic.id, row, score: -1.0 * score });
    }
    out.sort((a, b) => a.score - b.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return out.slice(0, limit);
  }
}

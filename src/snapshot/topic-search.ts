import type Database from 'better-sqlite3';
import { alternativesOf } from './fts-expression.js';
import { type Stemmer, stemmerOf } from './title-terms.js';

/**
 * Research's search of the topics' texts (reader.topicTextMatches) in topics_fts, ranked by the
 * bm25 subjects_fts gives the same rows (name 5, description 1): the number FTS5 computes
 * (sqlite's fts5_aux.c, as core/research/title-ranking.ts computes it for titles), from
 * subjects_fts's row and token counts and each term's rows there (subject_terms). Over the topics
 * alone FTS5's bm25 would weigh words and lengths otherwise and choose other topics at the edge
 * of the best few; this way the answers are those of the mixed table, from the topics' posting
 * lists alone.
 *
 * A phrase counts in a row when its alternative (a conjunction) matches the row, as often as
 * the row holds it, each instance weighing its column's weight. Expressions of the shape
 * topicTextMatches is asked (alternatives ORed, each phrase one term) are taken; anything else
 * answers undefined, and FTS5 ranks it in subjects_fts.
 */

const K1 = 1.2;
const B = 0.75;
/** bm25's weights of topics_fts's columns, as of subjects_fts's (type 0, id 0, name 5, description 1). */
const WEIGHTS: Record<string, number> = { name: 5.0, description: 1.0 };

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

export class TopicSearch {
  private readonly stemmer: Stemmer;
  private readonly rows: number;
  private readonly avgdl: number;
  /** Each topics_fts row's tokens (all columns), by rowid. */
  private readonly tokens = new Map<number, number>();
  private readonly idfs = new Map<string, number>();
  private readonly vocab: string;

  constructor(private readonly db: Database.Database) {
    this.stemmer = stemmerOf(this.tokenizer('topics_fts'));
    // subjects_fts's averages record (its rowid 1): its rows, then each column's tokens.
    const [rows = 0, ...columns] = varints(
      db.prepare('SELECT block FROM subjects_fts_data WHERE id = 1').pluck().get() as Buffer,
    );
    this.rows = rows;
    this.avgdl = columns.reduce((a, b) => a + b, 0) / rows;
    for (const [row, sz] of db.prepare('SELECT id, sz FROM topics_fts_docsize').raw().iterate() as Iterable<
      [number, Buffer]
    >)
      this.tokens.set(
        row,
        varints(sz).reduce((a, b) => a + b, 0),
      );
    this.vocab = `ri_topic_vocab_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
    db.exec(`CREATE VIRTUAL TABLE temp.${this.vocab} USING fts5vocab(main, topics_fts, instance)`);
  }

  private tokenizer(table: string): string {
    const definition = this.db
      .prepare('SELECT sql FROM sqlite_master WHERE name = ?')
      .pluck()
      .get(table) as string;
    return /tokenize\s*=\s*'([^']*)'/.exec(definition)?.[1] ?? 'unicode61';
  }

  private idf(term: string): number {
    let idf = this.idfs.get(term);
    if (idf === undefined) {
      const hits =
        (this.statement('SELECT rows FROM subject_terms WHERE term = ?').get(term) as number | undefined) ??
        0;
      idf = this.stemmer.ln((this.rows - hits + 0.5) / (hits + 0.5));
      if (idf <= 0) idf = 1e-6;
      if (this.idfs.size >= 20_000) this.idfs.clear();
      this.idfs.set(term, idf);
    }
    return idf;
  }

  private readonly prepared = new Map<string, Database.Statement>();
  private statement(sql: string, raw = false): Database.Statement {
    let s = this.prepared.get(sql);
    if (!s) {
      s = raw ? this.db.prepare(sql).raw() : this.db.prepare(sql).pluck();
      this.prepared.set(sql, s);
    }
    return s;
  }

  /** Each row's weighted count of a term (its instances, by column weight). */
  private frequencies(term: string): Map<number, number> {
    const out = new Map<number, number>();
    for (const [doc, col, n] of this.statement(
      `SELECT doc, col, count(*) FROM temp.${this.vocab} WHERE term = ? GROUP BY doc, col`,
      true,
    ).iterate(term) as Iterable<[number, string, number]>)
      out.set(doc, (out.get(doc) ?? 0) + (WEIGHTS[col] ?? 1.0) * n);
    return out;
  }

  /** The best `limit` topics matching `expr` by bm25, ties by id, or undefined when FTS5 must rank them. */
  rank(expr: string, limit: number): TopicMatch[] | undefined {
    const alternatives = alternativesOf(expr);
    if (!alternatives) return undefined;
    const terms = alternatives.map((alt) => alt.map((p) => this.stemmer.stem(p)));
    if (terms.some((alt) => alt.some((t) => t === null))) return undefined;
    const freqs = new Map<string, Map<number, number>>();
    for (const t of terms.flat() as string[]) if (!freqs.has(t)) freqs.set(t, this.frequencies(t));
    const matches = this.statement('SELECT rowid, id FROM topics_fts WHERE topics_fts MATCH ?', true).all(
      expr,
    ) as [number, string][];
    const out: TopicMatch[] = [];
    for (const [row, id] of matches) {
      const d = this.tokens.get(row) ?? 0;
      let score = 0;
      for (const alt of terms as string[][]) {
        // A conjunction's phrases count only where all of them are.
        if (!alt.every((t) => freqs.get(t)!.has(row))) continue;
        for (const t of alt) {
          const f = freqs.get(t)!.get(row)!;
          score += this.idf(t) * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + (B * d) / this.avgdl)));
        }
      }
      out.push({ id, row, score: -1.0 * score });
    }
    out.sort((a, b) => a.score - b.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return out.slice(0, limit);
  }
}

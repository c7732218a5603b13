import Database from 'better-sqlite3';
import { getOrCreate } from '../util/maps.js';
import { TITLE_TOKENIZER } from './schema.js';

/**
 * Words as the titles' full-text index holds them: the index's own tokenizer (porter stemming)
 * applied to a word, so research's topic model and its bm25 ranking
 * (core/research/title-ranking.ts) look words up as FTS5 does.
 */

/**
 * A phrase's term as the titles' tokenizer makes it (an FTS5 table of the same tokenizer, in
 * memory), and the natural log as SQLite computes it: both what FTS5 itself uses. One a thread
 * and tokenizer.
 */
export class Stemmer {
  private readonly db = new Database(':memory:');
  private readonly stems = new Map<string, string | null>();
  private readonly insert;
  private readonly clear;
  private readonly terms;
  readonly ln: (x: number) => number;

  constructor(tokenizer: string) {
    this.db.exec(
      `CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '${tokenizer}'); CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);`,
    );
    this.insert = this.db.prepare('INSERT INTO t (rowid, x) VALUES (1, ?)');
    this.clear = this.db.prepare('DELETE FROM t');
    this.terms = this.db.prepare('SELECT term FROM v').pluck();
    const ln = this.db.prepare('SELECT ln(?)').pluck();
    this.ln = (x) => ln.get(x) as number;
  }

  /** The index's term for a phrase, or null when it is not exactly one term. */
  stem(phrase: string): string | null {
    let term = this.stems.get(phrase);
    if (term === undefined) {
      this.insert.run(phrase);
      const terms = this.terms.all() as string[];
      this.clear.run();
      term = terms.length === 1 ? terms[0]! : null;
      if (this.stems.size >= 20_000) this.stems.clear();
      this.stems.set(phrase, term);
    }
    return term;
  }
}

const stemmers = new Map<string, Stemmer>();
/** This thread's stemmer of a tokenizer, made on first use. */
export const stemmerOf = (tokenizer: string) =>
  getOrCreate(stemmers, tokenizer, () => new Stemmer(tokenizer));

/** A word's term as the titles' index makes it (stemmed), or null when it is not exactly one term. */
export const titleTerm = (word: string): string | null => stemmerOf(TITLE_TOKENIZER).stem(word);

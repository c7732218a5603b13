import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { TitleRanker, type TitlesByLength } from '../../../src/core/research/title-ranking.js';
import { SqliteSnapshotReader } from '../../../src/snapshot/reader.js';
import { readTitleStats } from '../../../src/snapshot/title-stats.js';
import { buildIndex } from '../../../src/snapshot-build/title-index.js';
import { random } from '../../helpers/corpora.js';
import { tempDir } from '../../helpers/works.js';

/**
 * Ranking from the titles by length (papers_by_length, papers_repeats) against two oracles on
 * corpora made here: FTS5's own bm25 (ORDER BY bm25 LIMIT) and the ranking of every match from the
 * statistics. The same ordinals in the same order with the same scores, bit for bit, for every
 * expression and limit: generated corpora of short titles from a small vocabulary (so terms are
 * held twice and thrice, and lengths tie), and a hand-built one that pins what ranks first.
 */
const opened: Database.Database[] = [];
afterAll(() => {
  for (const db of opened) db.close();
});

interface Corpus {
  reader: SqliteSnapshotReader;
  /** The ranker over every match (no titles by length). */
  every: TitleRanker;
  /** The ranker from the titles by length, and how it searched them. */
  byLength: TitleRanker;
  searches: { plain: number; repeated: number };
}

/** The titles' indexes built as `ri build` builds them, from paper rows holding `titles`. */
function corpusOf(titles: (string | null)[]): Corpus {
  const dir = tempDir('ri-by-length-');
  const rows = join(dir, 'rows.sqlite');
  const source = new Database(rows);
  source.exec('CREATE TABLE papers (ordinal INTEGER PRIMARY KEY, title TEXT)');
  const insert = source.prepare('INSERT INTO papers VALUES (?, ?)');
  source.transaction(() => {
    for (const [o, t] of titles.entries()) insert.run(o, t);
  })();
  source.close();
  const side = join(dir, 'titles.sqlite');
  buildIndex(rows, side, () => {});
  const db = new Database(side, { readonly: true });
  opened.push(db);
  const stats = readTitleStats(db);
  const reader = new SqliteSnapshotReader(db, () => new Float64Array(0));
  const matches = (expr: string, from?: number) => reader.allTitleMatches(expr, from);
  const searches = { plain: 0, repeated: 0 };
  const byLength: TitlesByLength = (expr, fromTokens, throughTokens, limit, repeated) => {
    if (repeated) searches.repeated++;
    else searches.plain++;
    return reader.titlesByLength(expr, fromTokens, throughTokens, limit, repeated);
  };
  const newest = (expr: string, scan: number) => reader.newestTitleOrdinals(expr, scan);
  return {
    reader,
    every: new TitleRanker(stats, matches, 0),
    byLength: new TitleRanker(stats, matches, 0, { byLength, newest }),
    searches,
  };
}

/** The same answer from the titles by length, from every match, and from FTS5. */
function expectRankedAlike(c: Corpus, expr: string, limit: number): number {
  const fts5 = c.reader.titleMatches(expr, limit);
  const ours = c.byLength.rank(expr, limit);
  expect(ours, `${expr} LIMIT ${limit}`).toEqual(fts5);
  expect(c.every.rank(expr, limit), `${expr} LIMIT ${limit}`).toEqual(fts5);
  return fts5.length;
}

// A small vocabulary, most common first: element names and symbols, common title words, glue.
const WORDS = [
  'oxide',
  'iron',
  'of',
  'the',
  'films',
  'fe',
  'carbon',
  'catalysts',
  'and',
  'porous',
  'c',
  'single',
  'atom',
  'oxygen',
  'o',
  'vacancies',
  'nickel',
  'ni',
  'growth',
  'water',
];
const GLUE = new Set(['of', 'the', 'and']);

/** Titles of 1 to 14 words drawn by a power law over WORDS, some saying a word again. */
function titlesOf(rand: () => number, n: number): string[] {
  const word = () => WORDS[Math.floor(WORDS.length * rand() ** 1.8)]!;
  return Array.from({ length: n }, () => {
    const words = Array.from({ length: 1 + Math.floor(rand() * 14) }, word);
    if (rand() < 0.3) words.push(words[Math.floor(rand() * words.length)]!);
    if (rand() < 0.1) words.push(words[0]!, words[0]!);
    return words.map((w, i) => (i === 0 ? w[0]!.toUpperCase() + w.slice(1) : w)).join(' ');
  });
}

/** An expression of research's shape: 1-3 groups ANDed, each a word or 2-3 alternatives, one in five a pair of words. */
function expressionOf(rand: () => number): string {
  const words = WORDS.filter((w) => !GLUE.has(w) || rand() < 0.05);
  const word = () => `"${words[Math.floor(words.length * rand() ** 1.5)]!}"`;
  const alternative = () => (rand() < 0.2 ? `(${word()} AND ${word()})` : word());
  // A group of one alternative is one word (research's expansions come as further alternatives).
  const group = () => {
    const alts = Array.from({ length: 1 + Math.floor(rand() * rand() * 3) }, alternative);
    return alts.length === 1 ? word() : `(${alts.join(' OR ')})`;
  };
  const groups = Array.from({ length: 1 + Math.floor(rand() * 3) }, group);
  // One in ten: the looser search's OR at the top.
  return groups.join(rand() < 0.1 ? ' OR ' : ' AND ');
}

describe('ranking from the titles by length', () => {
  it('ranks as FTS5 bm25 and the ranking of every match do, on generated corpora', () => {
    let ranked = 0;
    let expressions = 0;
    for (const seed of [1, 2, 3, 4]) {
      const rand = random(seed);
      const c = corpusOf(titlesOf(rand, 400 + Math.floor(rand() * 1600)));
      for (let e = 0; e < 60; e++) {
        const expr = expressionOf(rand);
        expressions++;
        for (const limit of [1, 3, 10, 40, 200]) ranked += expectRankedAlike(c, expr, limit);
      }
      // Both searches were made: the titles by length and the titles holding a term twice.
      expect(c.searches.plain).toBeGreaterThan(100);
      expect(c.searches.repeated).toBeGreaterThan(20);
    }
    expect(expressions).toBe(240);
    expect(ranked).toBeGreaterThan(20_000);
  });

  it('ranks the newest matches as FTS5 bm25 does over them, ties newest first', () => {
    const rand = random(9);
    const c = corpusOf(titlesOf(rand, 1500));
    for (let e = 0; e < 40; e++) {
      const expr = expressionOf(rand);
      for (const [scan, limit] of [
        [50, 10],
        [300, 40],
        [2000, 5],
      ] as const)
        expect(c.byLength.rankNewest(expr, scan, limit), `${expr} ${scan} ${limit}`).toEqual(
          c.reader.newestTitleMatches(expr, scan, limit),
        );
    }
  });

  it('pins what ranks first on a hand-built corpus', () => {
    const filler = Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0
        ? 'Iron films on glass substrates grown by sputtering'
        : i % 3 === 1
          ? 'Oxide ceramics'
          : 'Water',
    );
    const c = corpusOf([
      ...filler,
      /* 60 */ 'Iron oxide nanoparticles for catalysis in water',
      /* 61 */ 'Oxide of iron',
      /* 62 */ 'Iron oxide',
      /* 63 */ 'Oxide iron oxide oxide',
      /* 64 */ 'Fe oxide',
      /* 65 */ 'Iron oxide and Fe oxide',
      /* 66 */ 'Iron oxide',
      /* 67 */ null,
      /* 68 */ 'Iron and the oxide of the iron of the oxide',
    ]);
    const order = (expr: string, limit: number) => c.byLength.rank(expr, limit)!.map((r) => r.ordinal);
    // Saying 'oxide' three times in four words passes the shortest titles; then each word once,
    // the shortest first, equal lengths by ordinal (62 and 66 tie; 61's 'of' counts in its
    // length); 65 says 'oxide' twice in five words.
    expect(order('"iron" AND "oxide"', 5)).toEqual([63, 62, 66, 61, 65]);
    // With the symbol: the rarer 'fe' weighs more than 'iron' ('Fe oxide' first), and matching
    // both alternatives more than either (65, though five words long).
    expect(order('("iron" OR "fe") AND "oxide"', 4)).toEqual([64, 65, 63, 62]);
    expect(c.searches.plain).toBeGreaterThan(0);
    for (const expr of ['"iron" AND "oxide"', '("iron" OR "fe") AND "oxide"', '"oxide"', '"iron" OR "oxide"'])
      for (const limit of [1, 2, 3, 6, 20]) expectRankedAlike(c, expr, limit);
    // A glue word's repeats are not in papers_repeats: every match is ranked instead.
    expectRankedAlike(c, '"iron" AND "of"', 3);
  });
});

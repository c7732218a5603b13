import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupExpr, STOP_WORDS, termGroups } from '../../../src/core/research/question.js';
import { TitleRanker } from '../../../src/core/research/title-ranking.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { parseExpression } from '../../../src/snapshot/fts-expression.js';
import { SqliteSnapshotReader } from '../../../src/snapshot/reader.js';
import { REPEATS_LEFT_OUT } from '../../../src/snapshot/schema.js';
import { readTitleStats, startTitleStats, type TitleStats } from '../../../src/snapshot/title-stats.js';
import { titleTerm } from '../../../src/snapshot/title-terms.js';
import { sampleDataDir } from '../../helpers/sample.js';

/**
 * The title ranker against its oracle, FTS5's own bm25 on the same snapshot: the same ordinals in
 * the same order with the same scores (bit for bit), for the expressions research builds from
 * questions and from titles, with limits that cut through ties.
 */
let db: Database.Database;
let path: string;
let stats: TitleStats;
beforeAll(async () => {
  const sample = await sampleDataDir();
  path = snapshotFile(sample.snapshots, sample.version);
  db = new Database(path, { readonly: true });
  stats = readTitleStats(db);
});
afterAll(() => db.close());

const fts5 = (expr: string, limit: number) =>
  db
    .prepare(
      'SELECT rowid AS ordinal, bm25(papers_fts) AS score FROM papers_fts WHERE papers_fts MATCH ? ORDER BY score LIMIT ?',
    )
    .all(expr, limit) as { ordinal: number; score: number }[];

/** The statistics read in their own thread, waited for. */
async function loadTitleStats(file: string): Promise<TitleStats> {
  const pending = startTitleStats(file);
  for (;;) {
    const read = pending.take();
    if (read === 'failed') throw new Error(`the title statistics of ${file} could not be read`);
    if (read) return read;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const matches = (expr: string) =>
  JSON.parse(
    db
      .prepare('SELECT json_group_array(rowid) FROM papers_fts WHERE papers_fts MATCH ?')
      .pluck()
      .get(expr) as string,
  ) as number[];

/** The ranker of a snapshot with the titles by length (schema 9), as research makes it. */
function lengthRanker(): TitleRanker {
  const reader = new SqliteSnapshotReader(db, () => new Float64Array(0));
  expect(reader.hasTitlesByLength()).toBe(true);
  return new TitleRanker(stats, (expr, from) => reader.allTitleMatches(expr, from), 0, {
    byLength: (...args) => reader.titlesByLength(...args),
    newest: (expr, scan) => reader.newestTitleOrdinals(expr, scan),
  });
}

/** The expression research asks first: every word of the question (its alternatives ORed). */
const strictExpr = (q: string) => termGroups(q).map(groupExpr).join(' AND ');

/** Each expression ranked by the ranker and by FTS5 at limits that cut through ties: the titles it ranked. */
function rankedLikeFts5(ranker: TitleRanker, exprs: string[]): number {
  let ranked = 0;
  for (const expr of exprs) {
    for (const limit of [1, 7, 50, 1000]) {
      const ours = ranker.rank(expr, limit);
      expect(ours, expr).toBeDefined();
      expect(ours, `${expr} LIMIT ${limit}`).toEqual(fts5(expr, limit));
      ranked += ours!.length;
    }
  }
  return ranked;
}

describe('title ranking', () => {
  it('reads the token counts, titles per term and repeated terms FTS5 holds', () => {
    const total = db.prepare('SELECT count(*) FROM papers').pluck().get() as number;
    expect(stats.rows).toBe(total);
    expect(stats.tokenizer).toBe('porter unicode61 remove_diacritics 2');
    expect(stats.tokens.length).toBe(total);
    // A term's titles as FTS5 counts them, and a repeated term as the instances show it.
    const oxide = db
      .prepare(`SELECT count(*) FROM papers_fts WHERE papers_fts MATCH '"oxide"'`)
      .pluck()
      .get();
    expect(stats.titlesWith.get('oxid')).toBe(oxide);
    const oxid = stats.repeats.get('oxid')!;
    const [ordinal, count] = [oxid.ordinals[0]!, oxid.counts[0]!];
    const title = db.prepare('SELECT title FROM papers WHERE ordinal = ?').pluck().get(ordinal) as string;
    expect(title.toLowerCase().match(/oxid/g)!.length).toBeGreaterThanOrEqual(count);
    expect(count).toBeGreaterThan(1);
  });

  it('ranks as FTS5 bm25 does: questions with element names, symbols, shorthand and common words', () => {
    for (const ranker of [new TitleRanker(stats, matches, 0), lengthRanker()]) {
      const questions = [
        'oxygen vacancies',
        'hydrogen evolution',
        'HER MoS2',
        'oxygen evolution nickel iron',
        'Fe catalysts',
        'iron oxide nanoparticles',
        'aluminium alloys',
        'sulfur cathode lithium',
        'CO2 reduction copper',
        'water',
        'carbon',
        'metal organic frameworks MOF',
        'solid oxide fuel cell SOFC',
        'Li ion battery',
        'zinc',
        'density functional theory DFT',
        'soil',
        'groundwater arsenic',
      ];
      expect(rankedLikeFts5(ranker, questions.map(strictExpr))).toBeGreaterThan(5_000);
    }
  });

  it('ranks as FTS5 bm25 does on the words of 300 real titles, two and three at a time', () => {
    for (const ranker of [new TitleRanker(stats, matches, 0), lengthRanker()]) {
      const titles = db
        .prepare('SELECT title FROM papers WHERE title IS NOT NULL ORDER BY ordinal LIMIT 300 OFFSET 1000')
        .pluck()
        .all() as string[];
      let compared = 0;
      for (const [i, title] of titles.entries()) {
        const words = termGroups(title).map((g) => g.word);
        const q = words.slice(i % 3, (i % 3) + 2 + (i % 2)).join(' ');
        const expr = strictExpr(q);
        if (!expr || !parseExpression(expr)) continue;
        const ours = ranker.rank(expr, 20);
        if (!ours) continue;
        expect(ours, expr).toEqual(fts5(expr, 20));
        compared++;
      }
      expect(compared).toBeGreaterThan(250);
    }
  });

  it('counts the titles of a phrase as FTS5 does', () => {
    const ranker = new TitleRanker(stats, matches, 0);
    const count = (expr: string) =>
      db.prepare('SELECT count(*) FROM papers_fts WHERE papers_fts MATCH ?').pluck().get(expr);
    for (const word of ['oxide', 'Oxides', 'catalysis', 'zzqxv', 'fe', 'nanoparticles', 'CO2'])
      expect(ranker.phraseTitles(`"${word}"`), word).toBe(count(`"${word}"`));
    expect(ranker.phraseTitles('("iron" OR "fe")')).toBeUndefined();
  });

  it('ranks as FTS5 bm25 does the looser search: the words ORed, nested ORs and conjunctions in them', () => {
    for (const ranker of [new TitleRanker(stats, matches, 0), lengthRanker()]) {
      const questions = [
        'graphitic photocatalysis',
        'HER MoS2',
        'lithium phosphate cathode',
        'storage magnesium',
        'oxygen evolution nickel iron',
        'perovskite solar cells stability',
        'Fe zinc',
        'groundwater arsenic',
      ];
      const loose = questions.map((q) => termGroups(q).map(groupExpr).join(' OR '));
      expect(rankedLikeFts5(ranker, loose)).toBeGreaterThan(5_000);
    }
    expect(parseExpression('("her" OR ("hydrogen" AND "evolution")) OR "mos2"')).toEqual([
      [['her'], ['hydrogen', 'evolution'], ['mos2']],
    ]);
  });

  it('leaves to FTS5 what it does not take: a phrase of two terms, few matches, other shapes', () => {
    const ranker = new TitleRanker(stats, matches, 0);
    expect(ranker.rank('("oxide" AND "iron") OR "zinc" AND "water"', 10)).toBeUndefined();
    expect(ranker.rank('"oxide" NOT "iron"', 10)).toBeUndefined();
    // 'oxide' is in about 1,500 of the sample's titles: below the default bound FTS5 ranks them.
    expect(new TitleRanker(stats, matches).rank('"oxide"', 10)).toBeUndefined();
    const lower = new TitleRanker(stats, matches, 1_000);
    expect(lower.rank('"oxide"', 10)).toEqual(fts5('"oxide"', 10));
    expect(ranker.rank('"oxide" AND "iron oxide"', 10)).toBeUndefined();
    expect(parseExpression('("iron" OR "fe") AND "oxide"')).toEqual([[['iron'], ['fe']], [['oxide']]]);
    expect(parseExpression('("her" OR ("hydrogen" AND "evolution"))')).toEqual([
      [['her'], ['hydrogen', 'evolution']],
    ]);
  });

  it('ranks the newest matches as FTS5 bm25 does over them, and few matches itself, with the titles by length', () => {
    const ranker = lengthRanker();
    const reader = new SqliteSnapshotReader(db, () => new Float64Array(0));
    for (const q of ['oxygen evolution nickel iron', 'catalysis', 'water', 'HER MoS2', 'soil carbon'])
      for (const expr of [strictExpr(q), termGroups(q).map(groupExpr).join(' OR ')])
        for (const [scan, limit] of [
          [200, 20],
          [2_000, 1_000],
        ])
          expect(ranker.rankNewest(expr, scan!, limit!), expr).toEqual(
            reader.newestTitleMatches(expr, scan!, limit!),
          );
    // 'oxide' is in about 1,500 of the sample's titles: below the default bound, ranked all the same.
    const few = new TitleRanker(stats, matches, undefined, {
      byLength: (...args) => reader.titlesByLength(...args),
    });
    expect(few.rank('"oxide"', 10)).toEqual(fts5('"oxide"', 10));
  });

  it("leaves out of the repeated titles' markers the glue words research leaves out of questions", () => {
    expect([...STOP_WORDS].map((w) => titleTerm(w)).sort()).toEqual([...REPEATS_LEFT_OUT].sort());
  });

  it('reads the statistics in a thread of its own, the same as in this one', async () => {
    const background = await loadTitleStats(path);
    expect(background.rows).toBe(stats.rows);
    expect(background.totalTokens).toBe(stats.totalTokens);
    expect(Buffer.from(background.tokens.buffer).equals(Buffer.from(stats.tokens.buffer))).toBe(true);
    expect([...background.repeats.keys()].sort()).toEqual([...stats.repeats.keys()].sort());
  });
});

import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LENSES, type ResearchRequest, research } from '../../../src/core/research.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import type { SnapshotReader, SnapshotView } from '../../../src/snapshot/reader.js';
import { Snapshot } from '../../../src/snapshot/snapshot.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

let snapshot: Snapshot;
beforeAll(async () => {
  const sample = await sampleDataDir();
  snapshot = new Snapshot(sample.version, snapshotFile(sample.snapshots, sample.version));
});
afterAll(() => snapshot.retire());

const viewer = { hriAvailable: true, publicUrl: 'https://ri.example' };

/** The snapshot with its reader's queries overridden (the rest read the real snapshot). */
function withReader(s: Snapshot, overrides: Partial<SnapshotReader>): SnapshotView {
  const reader = Object.assign(Object.create(s.reader) as SnapshotReader, overrides);
  return { version: s.version, meta: s.meta, reader, memoize: (key, compute) => s.memoize(key, compute) };
}

const answer = (
  s: SnapshotView,
  request: Omit<ResearchRequest, 'pageSize' | 'page' | 'lenses'>,
  page = 1,
) => {
  try {
    return JSON.stringify(research(s, { ...request, pageSize: 5, lenses: [...LENSES], page }, viewer));
  } catch (e) {
    return JSON.stringify(e);
  }
};

describe('research ranking', () => {
  it('a few title matches, found unranked and ranked only when their order shows, give the answers bm25 ranking gives', () => {
    // Papers by DOI and by title (each matches its own title and often nothing else), and
    // questions with one, few and many title matches. Eighty of them: a title shared by a few
    // papers with a tie in bm25 is rarer since a work's versions (a preprint and its article)
    // count once, and the check needs one.
    const papers = snapshot.db
      .prepare(
        'SELECT doi, title FROM papers WHERE doi IS NOT NULL AND title IS NOT NULL AND ordinal % 53 = 0 LIMIT 80',
      )
      .all() as { doi: string; title: string }[];
    const requests: Omit<ResearchRequest, 'pageSize' | 'page' | 'lenses'>[] = [
      ...papers.flatMap((p) => [{ paper: p.doi }, { paper: p.title }]),
      ...[
        'HER MoS2',
        'oxygen evolution nickel iron',
        'perovskite solar cells stability',
        'catalysis',
        'zzqxv',
      ].map((q) => ({ q })),
    ];
    // The ranked way, always: as many unranked matches as asked for, so every search ranks by bm25.
    const ranked = withReader(snapshot, { titleMatchOrdinals: (_, limit) => Array<number>(limit).fill(0) });
    // How often a few strict matches (2 or more) came unranked, and how often they were ranked after.
    const few = new Set<string>();
    let unranked = 0;
    let fewAsks = 0;
    let rankedAfter = 0;
    const counting = withReader(snapshot, {
      titleMatchOrdinals: (match, limit) => {
        const found = snapshot.reader.titleMatchOrdinals(match, limit);
        if (found.length < limit) unranked++;
        if (found.length > 1 && found.length < limit) {
          few.add(match);
          fewAsks++;
        }
        return found;
      },
      titleMatches: (match, limit) => {
        if (few.has(match)) rankedAfter++;
        return snapshot.reader.titleMatches(match, limit);
      },
    });
    for (const request of requests) {
      for (const page of [1, 2]) expect(answer(counting, request, page)).toBe(answer(ranked, request, page));
    }
    // The unranked way was taken (a paper's own title is often its only full match, or one of few).
    expect(unranked).toBeGreaterThan(5);
    // Both ways for a few matches: ranked after (a tie shows their order) and never ranked.
    expect(rankedAfter).toBeGreaterThan(0);
    expect(rankedAfter).toBeLessThan(fewAsks);
  });
});

describe('research with the title ranker', () => {
  it('answers every question as with FTS5 ranking alone: papers, lists, communities and pages', async () => {
    const sample = await sampleDataDir();
    const path = snapshotFile(sample.snapshots, sample.version);
    // A kept snapshot of schema 8 (before the titles by length), made from the sample's.
    const olderPath = join(tempDir('ri-schema8-'), 'older.sqlite');
    copyFileSync(path, olderPath);
    const older = new Database(olderPath);
    older.exec(
      "DROP TABLE papers_by_length; DROP TABLE papers_repeats; UPDATE meta SET value = '8' WHERE key = 'schema_version'",
    );
    older.close();
    // The ranker for every question of the small sample (by default it waits for 100,000 papers).
    const options = { titleRanking: { fromPapers: 0, fewMatches: 0 } };
    const ranking = new Snapshot(sample.version, path, options);
    const ranking8 = new Snapshot(sample.version, olderPath, options);
    const fts5 = new Snapshot(sample.version, path);
    try {
      expect(await ranking.reader.titleRankingReady()).toBe(true);
      expect(await ranking8.reader.titleRankingReady()).toBe(true);
      expect(await fts5.reader.titleRankingReady()).toBe(false);
      expect(ranking.reader.hasTitlesByLength()).toBe(true);
      expect(ranking8.reader.hasTitlesByLength()).toBe(false);
      const titles = ranking.db
        .prepare('SELECT title FROM papers WHERE title IS NOT NULL AND ordinal % 211 = 0 LIMIT 30')
        .pluck()
        .all() as string[];
      const questions = [
        'oxygen vacancies',
        'HER MoS2',
        'oxygen evolution nickel iron',
        'iron oxide nanoparticles',
        'catalysis',
        'lithium ion battery cathode',
        'groundwater arsenic',
        'CO2 reduction copper',
        ...titles.map((t) => t.split(/\s+/).slice(0, 3).join(' ')),
      ];
      // The ranker reads the titles by length (schema 9), or every title a search matches (8).
      let byLength = 0;
      let every = 0;
      const counting = withReader(ranking, {
        titlesByLength: (...args) => {
          byLength++;
          return ranking.reader.titlesByLength(...args);
        },
      });
      const counting8 = withReader(ranking8, {
        allTitleMatches: (match, from) => {
          every++;
          return ranking8.reader.allTitleMatches(match, from);
        },
      });
      for (const q of questions)
        for (const page of [1, 3]) {
          const expected = answer(fts5, { q }, page);
          expect(answer(counting, { q }, page), q).toBe(expected);
          expect(answer(counting8, { q }, page), q).toBe(expected);
        }
      for (const t of titles.slice(0, 10)) {
        expect(answer(ranking, { paper: t })).toBe(answer(fts5, { paper: t }));
        expect(answer(ranking8, { paper: t })).toBe(answer(fts5, { paper: t }));
      }
      expect(byLength).toBeGreaterThan(40);
      expect(every).toBeGreaterThan(40);
    } finally {
      ranking.retire();
      ranking8.retire();
      fts5.retire();
    }
  });
});

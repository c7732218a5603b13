import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/core/errors.js';
import { rehearsalQuestions, rehearse } from '../../../src/core/research/rehearsal.js';
import { LENSES, research } from '../../../src/core/research.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { Snapshot } from '../../../src/snapshot/snapshot.js';
import { sampleDataDir } from '../../helpers/sample.js';

const viewer = { hriAvailable: true, publicUrl: 'http://localhost' };
let snapshot: Snapshot;

beforeAll(async () => {
  const sample = await sampleDataDir();
  // The title ranker for the small sample (by default it waits for 100,000 papers): its
  // statistics are read on a thread, so the rehearsal has something to wait for.
  snapshot = new Snapshot(sample.version, snapshotFile(sample.snapshots, sample.version), {
    titleRanking: { fromPapers: 0, fewMatches: 0 },
  });
}, 120_000);

afterAll(() => snapshot?.retire());

describe("research's rehearsal (a worker compiles research before real questions come)", () => {
  it('waits for the titles statistics, then asks each question once, then is ready', async () => {
    // The statistics are read on a thread of their own: not before this synchronous call returns.
    expect(rehearse(snapshot, 0)).toBe('later');
    expect(await snapshot.reader.titleRankingReady()).toBe(true);
    const n = rehearsalQuestions(snapshot.reader, Number(snapshot.meta.corpus_papers)).length;
    for (let i = 0; i < n; i++) expect(rehearse(snapshot, i)).toBe('asked');
    expect(rehearse(snapshot, n)).toBe('ready');
    expect(rehearse(snapshot, n + 5)).toBe('ready');
  });

  it('asks questions of every shape from the snapshot itself, the same each time, most of them answered', () => {
    const papers = Number(snapshot.meta.corpus_papers);
    const questions = rehearsalQuestions(snapshot.reader, papers);
    expect(rehearsalQuestions(snapshot.reader, papers)).toEqual(questions);
    const names = new Set(
      snapshot.db.prepare("SELECT name FROM subjects WHERE type = 'topic'").pluck().all() as string[],
    );
    const asked = questions.map((x) => x.q ?? '');
    // A community's whole name, a few of its words, papers by title and by DOI.
    expect(asked.filter((q) => names.has(q)).length).toBeGreaterThanOrEqual(6);
    expect(asked.filter((q) => q.split(' ').length === 2).length).toBeGreaterThanOrEqual(12);
    expect(questions.filter((x) => x.paper).length).toBeGreaterThan(0);
    let answered = 0;
    for (const question of questions) {
      try {
        research(snapshot, { ...question, pageSize: 10, lenses: [...LENSES], page: 1 }, viewer);
        answered++;
      } catch (e) {
        expect(e).toBeInstanceOf(ServiceError);
      }
    }
    expect(answered).toBeGreaterThan(questions.length * 0.75);
  });
});

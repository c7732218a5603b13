import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LENSES, type ResearchRequest, research } from '../../src/core/research.js';
import { snapshotFile } from '../../src/snapshot/publish.js';
import type { SnapshotReader, SnapshotView } from '../../src/snapshot/reader.js';
import { Snapshot } from '../../src/snapshot/snapshot.js';
import { sampleDataDir } from '../helpers/sample.js';

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
  it('a lone title match, found unranked, gives the answers bm25 ranking gives', () => {
    // Papers by DOI and by title (each matches its own title and often nothing else), and
    // questions with one, few and many title matches.
    const papers = snapshot.db
      .prepare(
        'SELECT doi, title FROM papers WHERE doi IS NOT NULL AND title IS NOT NULL ORDER BY ordinal LIMIT 12',
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
    // The ranked way, always: every title search ranks by bm25, as before the unranked lone match.
    const ranked = withReader(snapshot, { titleMatchOrdinals: () => [0, 0] });
    let unranked = 0;
    const counting = withReader(snapshot, {
      titleMatchOrdinals: (match, limit) => {
        const found = snapshot.reader.titleMatchOrdinals(match, limit);
        if (found.length <= 1) unranked++;
        return found;
      },
    });
    for (const request of requests) {
      for (const page of [1, 2]) expect(answer(counting, request, page)).toBe(answer(ranked, request, page));
    }
    // The unranked way was taken (a paper's own title is often its only full match).
    expect(unranked).toBeGreaterThan(5);
  });
});

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLED_SAMPLE } from '../../../src/config/paths.js';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { type Corpus, loadCorpusReporting } from '../../../src/scoring/corpus.js';
import { computeImpact, type PaperImpact } from '../../../src/scoring/impact.js';
import { DEFAULT_PARAMETERS } from '../../../src/scoring/parameters.js';
import { shareColumns } from '../../../src/snapshot-build/score-subjects.js';
import { ri } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

/**
 * `ri build` scores in a worker thread that reads the corpus columns in shared memory; run from
 * the sources (here), the build scores on its own thread. Both must write the same file.
 */
describe('scoring in the build', () => {
  it('writes the same snapshot from the worker (shared columns) as on the build thread', async () => {
    // The CLI: the compiled build, which scores in its worker thread (the bundled sample, with
    // the bundled taxonomy that `ri ingest` loads by default).
    const data = join(tempDir('ri-scoring-worker-'), 'data');
    expect(ri(['ingest', ...BUNDLED_SAMPLE.works, '--data-dir', data]).status).toBe(0);
    const built = ri(['build', '--data-dir', data]);
    expect(built.status, built.stderr).toBe(0);
    const byWorker = built.stdout.trim().split('\n').at(-1)!;
    // The sources: no compiled worker, so scoring runs here.
    const here = await sampleDataDir();
    expect(here.subjects).toBeGreaterThan(20);
    expect(byWorker).toMatch(/^[0-9a-f]{16}$/);
    expect(here.version).toBe(byWorker);
  }, 120_000);

  it('puts the columns it shares in shared memory, values unchanged', () => {
    const n = 5;
    const corpus = {
      workId: Float64Array.from([1, 2, 3, 4, 5]),
      doiRank: Int32Array.from([2, 1, 3, 5, 4]),
      year: Int16Array.from([2020, 2021, 0, 2022, 2023]),
      day: new Int32Array(n).fill(7),
      ageDay: new Int32Array(n).fill(8),
      citations: Int32Array.from([0, -1, 3, 4, 5]),
      primaryTopic: new Int32Array(n).fill(1),
      field: new Int32Array(n).fill(16),
      topics: { start: Int32Array.from([0, 1, 1, 2, 2, 3]), values: Int32Array.from([0, 1, 0]) },
      keywords: { start: new Int32Array(n + 1), values: new Int32Array(0) },
      elements: { start: Int32Array.from([0, 2, 2, 2, 2, 2]), values: Int32Array.from([25, 7]) },
    } as unknown as Corpus;
    const impact = {
      impactScore: Float64Array.from([1.5, Number.NaN, 3, 4, 5]),
      citationPercentile: Float64Array.from([10, Number.NaN, 30, 40, 50]),
      highImpact: Uint8Array.from([0, 0, 1, 1, 0]),
      curves: new Map(),
    } as PaperImpact;
    const before = JSON.stringify([corpus, impact], (_, v) =>
      ArrayBuffer.isView(v) ? Array.from(v as Float64Array, String) : v,
    );
    shareColumns(corpus, impact);
    const after = JSON.stringify([corpus, impact], (_, v) =>
      ArrayBuffer.isView(v) ? Array.from(v as Float64Array, String) : v,
    );
    expect(after).toBe(before);
    for (const column of [
      corpus.workId,
      corpus.year,
      corpus.topics.values,
      impact.impactScore,
      impact.highImpact,
    ])
      expect(column.buffer).toBeInstanceOf(SharedArrayBuffer);
  });

  it('finds the columns of a loaded corpus in shared memory already: nothing is copied', async () => {
    const here = await sampleDataDir();
    const store = await openCorpusStore(join(here.dataDir, 'corpus.duckdb'));
    try {
      const { corpus } = await loadCorpusReporting(store, DEFAULT_PARAMETERS, null);
      const impact = computeImpact(corpus, DEFAULT_PARAMETERS);
      const columns = (owner: object) =>
        Object.entries(owner).flatMap(([key, v]) =>
          ArrayBuffer.isView(v)
            ? [[key, v]]
            : ArrayBuffer.isView(v?.start)
              ? [
                  [`${key}.start`, v.start],
                  [`${key}.values`, v.values],
                ]
              : [],
        ) as [string, ArrayBufferView][];
      const before = [...columns(corpus), ...columns(impact)];
      expect(before.length).toBeGreaterThanOrEqual(14);
      for (const [key, column] of before) expect(column.buffer, key).toBeInstanceOf(SharedArrayBuffer);
      shareColumns(corpus, impact);
      const after = [...columns(corpus), ...columns(impact)];
      expect(after.map(([, c]) => c)).toEqual(before.map(([, c]) => c));
      for (const [i, [key, column]] of after.entries()) expect(column, key).toBe(before[i]![1]);
    } finally {
      store.close();
    }
  }, 120_000);
});

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../src/ingest/sources.js';
import type { Corpus } from '../../src/scoring/corpus.js';
import type { PaperImpact } from '../../src/scoring/impact.js';
import { buildSnapshot } from '../../src/snapshot/build-snapshot.js';
import { shareColumns } from '../../src/snapshot/score-subjects.js';
import { ri } from '../helpers/cli.js';
import { tempDir, topic, work, writeWorks } from '../helpers/works.js';

/**
 * `ri build` scores in a worker thread that reads the corpus columns in shared memory; run from
 * the sources (here), the build scores on its own thread. Both must write the same file.
 */
const ELEMENTS = ['Iron', 'Nickel', 'Cobalt', 'Copper', 'Lithium', 'Oxygen', 'Platinum', 'Zinc'];
const NOUNS = ['catalysts', 'oxide films', 'nanoparticles', 'alloys', 'electrodes', 'batteries'];
const TOPICS = [
  topic(31001, 'Electrocatalysis', 0.95),
  topic(31002, 'Battery materials', 0.9, 21),
  topic(31003, 'Thin films', 0.8),
];

function corpus(): Record<string, unknown>[] {
  return Array.from({ length: 240 }, (_, i) => {
    const a = ELEMENTS[i % ELEMENTS.length]!;
    const b = ELEMENTS[(i * 7 + 3) % ELEMENTS.length]!;
    const t = TOPICS[i % TOPICS.length]!;
    const day = String(1 + (i % 28)).padStart(2, '0');
    const month = String(1 + (i % 12)).padStart(2, '0');
    const year = 2016 + (i % 9);
    return work(5000 + i, {
      title: `${a}-${b} ${NOUNS[i % NOUNS.length]} ${i % 5 === 0 ? 'for water splitting' : ''}`.trim(),
      doi: i % 11 === 0 ? null : `https://doi.org/10.${1000 + (i % 13)}/x${i}`,
      publication_year: year,
      publication_date: i % 17 === 0 ? null : `${year}-${month}-${day}`,
      cited_by_count: i % 9 === 0 ? undefined : (i * 37) % 101,
      counts_by_year: i % 9 === 0 ? undefined : [{ year: Math.min(2024, year + 1), cited_by_count: i % 7 }],
      primary_topic: i % 19 === 0 ? null : t,
      topics: i % 19 === 0 ? [] : [t, TOPICS[(i + 1) % TOPICS.length]!],
      keywords: [
        { id: `https://openalex.org/keywords/k${i % 23}`, display_name: `Keyword ${i % 23}`, score: 0.6 },
        {
          id: `https://openalex.org/keywords/k${(i * 3) % 31}`,
          display_name: `Keyword ${(i * 3) % 31}`,
          score: 0.4,
        },
      ],
      referenced_works: [1, 2, 3].map((k) => `https://openalex.org/W${5000 + ((i * k * 13) % 240)}`),
    });
  });
}

describe('scoring in the build', () => {
  it('writes the same snapshot from the worker (shared columns) as on the build thread', async () => {
    const dir = tempDir('ri-scoring-worker-');
    const works = writeWorks(join(dir, 'works.jsonl'), corpus());
    // The CLI: the compiled build, which scores in its worker thread.
    const data = join(dir, 'data');
    expect(ri(['ingest', works, '--data-dir', data]).status).toBe(0);
    const built = ri(['build', '--data-dir', data]);
    expect(built.status, built.stderr).toBe(0);
    const byWorker = built.stdout.trim().split('\n').at(-1)!;
    // The sources: no compiled worker, so scoring runs here.
    const corpusPath = join(dir, 'here.duckdb');
    await ingest(corpusPath, expandWorksPaths([works]));
    const here = await buildSnapshot(corpusPath, join(dir, 'here-snapshots'));
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
      refs: { start: new Int32Array(n + 1), values: new Int32Array(0) },
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
    expect(corpus.refs.values.buffer).not.toBeInstanceOf(SharedArrayBuffer); // not read by scoring
  });
});

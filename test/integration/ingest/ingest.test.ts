import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { tagWorks } from '../../../src/tagging/tag-works.js';
import { tempDir, topic, work, writeWorks } from '../../helpers/works.js';

/** Ingest, then the tag step (as `ri ingest` runs them). */
async function ingestPaths(storePath: string, ...paths: string[]) {
  const summary = await ingest(storePath, expandWorksPaths(paths));
  const store = await openCorpusStore(storePath);
  try {
    summary.tagged = await tagWorks(store);
  } finally {
    store.close();
  }
  return summary;
}

async function row(storePath: string, id: number) {
  const store = await openCorpusStore(storePath);
  try {
    const [r] = await store.rows(
      `SELECT w.id::DOUBLE AS id, updated_date, doi, title, year, pub_date, venue, cited_by_count, counts_by_year,
              keywords, refs, t.symbols FROM works w LEFT JOIN tags t USING (id) WHERE w.id = ${id}`,
    );
    return r;
  } finally {
    store.close();
  }
}

async function count(storePath: string) {
  const store = await openCorpusStore(storePath);
  try {
    return await store.countWorks();
  } finally {
    store.close();
  }
}

describe('ingest', () => {
  it('is idempotent: the same file twice changes nothing', async () => {
    const dir = tempDir();
    const file = writeWorks(join(dir, 'works.jsonl.gz'), [
      work(1),
      work(2),
      work(3, { title: 'Iron oxide catalysts' }),
    ]);
    const store = join(dir, 'corpus.duckdb');
    const first = await ingestPaths(store, file);
    expect(first.counts).toMatchObject({ read: 3, kept: 3, replaced: 0, unchanged: 0 });
    expect(first.tagged).toBe(3);
    const before = await row(store, 3);
    const second = await ingestPaths(store, file);
    expect(second.counts).toMatchObject({ read: 3, kept: 0, replaced: 0, unchanged: 3 });
    expect(second.tagged).toBe(0);
    expect(await count(store)).toBe(3);
    expect(await row(store, 3)).toEqual(before);
    expect(before?.symbols).toBe('O,Fe');
  });

  it('names a keyword or topic the same whichever order its differently spelt copies are read in', async () => {
    const dir = tempDir();
    const spelt = (id: number, keyword: string, topicName: string) =>
      work(id, {
        keywords: [{ id: 'https://openalex.org/keywords/catalysis', display_name: keyword, score: 0.8 }],
        primary_topic: topic(99001, topicName, 0.99),
        topics: [topic(99001, topicName, 0.99)],
      });
    const a = writeWorks(join(dir, 'a.jsonl'), [spelt(1, 'Catalysis', 'Zeolite Catalysis')]);
    const b = writeWorks(join(dir, 'b.jsonl'), [spelt(2, 'catalysis (chemistry)', 'Zeolite catalysis')]);
    const names = async (files: string[]) => {
      const path = join(tempDir(), 'corpus.duckdb');
      // In this order, unsorted: as DuckDB's parallel reader may stage them.
      await ingest(
        path,
        files.flatMap((f) => expandWorksPaths([f])),
      );
      const store = await openCorpusStore(path);
      try {
        return await store.rows(
          "SELECT (SELECT name FROM keywords WHERE slug = 'catalysis') AS keyword, (SELECT name FROM topics WHERE id = 99001) AS topic",
        );
      } finally {
        store.close();
      }
    };
    const forward = await names([a, b]);
    expect(await names([b, a])).toEqual(forward);
    expect(forward).toEqual([{ keyword: 'Catalysis', topic: 'Zeolite Catalysis' }]);
  });

  it('replaces a record only with a newer updated_date, in whichever order files come', async () => {
    const dir = tempDir();
    const older = work(7, { cited_by_count: 1, updated_date: '2025-01-01T00:00:00' });
    const newer = work(7, { cited_by_count: 9, updated_date: '2025-06-01T00:00:00' });
    const a = writeWorks(join(dir, 'a/works/updated_date=2025-01-01/part_000.gz'), [older]);
    const b = writeWorks(join(dir, 'b/works/updated_date=2025-06-01/part_000.gz'), [newer]);
    const store = join(dir, 'corpus.duckdb');
    await ingestPaths(store, b);
    const r = await ingestPaths(store, a); // the older copy arrives later: ignored
    expect(r.counts).toMatchObject({ unchanged: 1, replaced: 0 });
    expect((await row(store, 7))?.cited_by_count).toBe(9);

    const store2 = join(dir, 'corpus2.duckdb');
    await ingestPaths(store2, a);
    const r2 = await ingestPaths(store2, b);
    expect(r2.counts).toMatchObject({ replaced: 1 });
    expect((await row(store2, 7))?.cited_by_count).toBe(9);
  });

  it('reads the snapshot layout from a folder, older partitions first', async () => {
    const dir = tempDir();
    writeWorks(join(dir, 'works/updated_date=2025-06-01/part_000.gz'), [
      work(1, { updated_date: '2025-06-01T00:00:00' }),
    ]);
    writeWorks(join(dir, 'works/updated_date=2025-01-01/part_000.gz'), [
      work(1, { updated_date: '2025-01-01T00:00:00' }),
    ]);
    writeWorks(join(dir, 'works/updated_date=2025-01-01/part_001.gz'), [work(2)]);
    writeFileSync(join(dir, 'works/README.txt'), 'not a works file');
    const files = expandWorksPaths([dir]);
    expect(files.map((f) => f.partitionDate)).toEqual(['2025-01-01', '2025-01-01', '2025-06-01']);
    const store = join(dir, 'corpus.duckdb');
    const r = await ingestPaths(store, dir);
    expect(r.counts).toMatchObject({ read: 3, kept: 2, replaced: 1 });
    expect((await row(store, 1))?.updated_date).toBe('2025-06-01T00:00:00');
  });

  it('counts and reports malformed lines with file and line number, and goes on', async () => {
    const dir = tempDir();
    const file = writeWorks(join(dir, 'works.jsonl'), [
      work(1),
      '{"id": "https://openalex.org/W2", "title": ',
      '[1, 2, 3]',
      '{"title": "no id"}',
      '',
      work(3),
    ]);
    const store = join(dir, 'corpus.duckdb');
    const r = await ingestPaths(store, file);
    expect(r.counts).toMatchObject({ read: 5, kept: 2 });
    expect(r.counts.skipped).toMatchObject({ malformed: 1, invalid: 2 });
    expect(r.badLines.map((b) => [b.file, b.line])).toEqual([
      [file, 2],
      [file, 3],
      [file, 4],
    ]);
    expect(r.badLines[0]!.reason).toMatch(/malformed JSON/);
  });

  it('keeps what a truncated gzip held before it broke off, and reports the file', async () => {
    const dir = tempDir();
    const records = Array.from({ length: 3000 }, (_, i) => JSON.stringify(work(i + 1))).join('\n');
    const full = gzipSync(records);
    const path = join(dir, 'broken.jsonl.gz');
    writeFileSync(path, full.subarray(0, Math.floor(full.length * 0.6)));
    const good = writeWorks(join(dir, 'good.jsonl.gz'), [work(99999)]);
    const store = join(dir, 'corpus.duckdb');
    const r = await ingestPaths(store, path, good);
    expect(r.fileErrors).toHaveLength(1);
    expect(r.fileErrors[0]!.file).toBe(path);
    expect(r.counts.kept).toBeGreaterThan(1);
    expect(r.counts.kept).toBeLessThan(3001);
    expect(await row(store, 99999)).toBeDefined();
  });

  it('excludes retracted works and paratext, and a retracted newer version removes the older one', async () => {
    const dir = tempDir();
    const store = join(dir, 'corpus.duckdb');
    await ingestPaths(store, writeWorks(join(dir, 'a.jsonl'), [work(1), work(2)]));
    const r = await ingestPaths(
      store,
      writeWorks(join(dir, 'b.jsonl'), [
        work(1, { is_retracted: true, updated_date: '2025-09-01T00:00:00' }),
        work(3, { is_paratext: true }),
      ]),
    );
    expect(r.counts.skipped).toMatchObject({ retracted: 1, paratext: 1 });
    expect(r.counts.removed).toBe(1);
    expect(await row(store, 1)).toBeUndefined();
    expect(await row(store, 3)).toBeUndefined();
    expect(await row(store, 2)).toBeDefined();
  });

  it('keeps a record with missing fields, those fields unknown (not zero)', async () => {
    const dir = tempDir();
    const partial = {
      id: 'https://openalex.org/W55',
      title: 'Cobalt phosphide for the hydrogen evolution reaction',
      publication_year: 2025,
      publication_date: '2025-03-02',
      primary_location: { source: { display_name: 'ChemCatChem' } },
      topics: [],
      primary_topic: null,
    };
    const store = join(dir, 'corpus.duckdb');
    const r = await ingestPaths(store, writeWorks(join(dir, 'p.jsonl'), [partial]));
    expect(r.counts.kept).toBe(1);
    const stored = (await row(store, 55))!;
    expect(stored.cited_by_count).toBeNull();
    expect(stored.counts_by_year).toBeNull();
    expect(stored.keywords).toBeNull();
    expect(stored.refs).toBeNull();
    expect(stored.doi).toBeNull();
    expect(stored.updated_date).toBe('');
    expect(stored.venue).toBe('ChemCatChem');
    expect(String(stored.symbols).split(',')).toEqual(expect.arrayContaining(['Co', 'P', 'H']));
  });
});

describe('a real record', () => {
  it('is stored with ids, DOI, venue, topics, keywords and citations normalised', async () => {
    const gz = readFileSync(
      join(import.meta.dirname, '../../../fixtures/openalex/works-geoscience.jsonl.gz'),
    );
    const first = JSON.parse(gunzipSync(gz).toString('utf8').split('\n')[0]!) as Record<string, unknown>;
    const dir = tempDir();
    const store = join(dir, 'corpus.duckdb');
    await ingestPaths(store, writeWorks(join(dir, 'real.jsonl'), [first]));
    const r = (await row(store, 103112271))!;
    expect(r.doi).toBe('10.1016/b978-044482465-3/50014-0');
    expect(r.venue).toBe('Elsevier eBooks');
    expect(r.cited_by_count).toBe(1);
    expect(r.counts_by_year).toEqual([{ year: 2012, cited_by_count: 1 }]);
    expect((r.keywords as { slug: string; score: number }[])[0]).toEqual({
      slug: 'geology',
      score: 0.8952196836471558,
    });
  });

  it('goes line by line when a value has the wrong type, and keeps the record', async () => {
    const dir = tempDir();
    const store = join(dir, 'corpus.duckdb');
    const odd = work(8, { publication_year: '2021', cited_by_count: 'many' });
    const r = await ingestPaths(store, writeWorks(join(dir, 'odd.jsonl'), [odd, work(9)]));
    expect(r.counts).toMatchObject({ read: 2, kept: 2 });
    const stored = (await row(store, 8))!;
    expect(stored.year).toBe(2021);
    expect(stored.cited_by_count).toBeNull();
  });
});

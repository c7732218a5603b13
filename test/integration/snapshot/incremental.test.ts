import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { versionKey } from '../../../src/ingest/paper-record.js';
import { tagElements } from '../../../src/tagging/tagger.js';
import { ri } from '../../helpers/cli.js';
import { tempDir, topic, work, writeWorks } from '../../helpers/works.js';

/**
 * Incremental publication over the real CLI: a corpus brought up to date by `ri update` (the
 * build cache plus the works changed since) publishes the same snapshot, byte for byte (the same
 * data_version), as a full build of the same corpus published after the same snapshot (a
 * snapshot holds what moved since the one published before it: snapshot-build/changes.ts); and a
 * cache that is damaged, of another store or older than the change log is refused and the build
 * loads in full, to the same result.
 */
const SAMPLE = join(import.meta.dirname, '../../../fixtures/openalex/works-geoscience.jsonl.gz');
const sampleRecords = () =>
  gunzipSync(readFileSync(SAMPLE))
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown> & { id: string; referenced_works?: string[] });

const idOf = (r: { id: string }) => Number(r.id.replace('https://openalex.org/W', ''));

let dir: string;
let p1: string;
let p2: string;

function run(args: string[]) {
  const r = ri(args);
  if (r.status !== 0) throw new Error(`ri ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return { version: r.stdout.trim().split('\n').at(-1)!, log: r.stderr };
}

const build = (data: string, ...flags: string[]) => run(['build', ...flags, '--data-dir', data]);
const ingest = (data: string, ...paths: string[]) => run(['ingest', ...paths, '--data-dir', data]);
/** The publications whose changes a snapshot holds (change_publications). */
function publicationsOf(data: string, version: string) {
  const db = new Database(join(data, 'snapshots', `${version}.sqlite`), { readonly: true });
  try {
    return db.prepare('SELECT * FROM change_publications ORDER BY publication').all() as {
      publication: number;
      version: string | null;
      since: string;
      changes: number;
    }[];
  } finally {
    db.close();
  }
}
const snapshotBytes = (data: string, version: string) =>
  readFileSync(join(data, 'snapshots', `${version}.sqlite`));

/**
 * A full build of the same files in a fresh data folder, published after the same snapshot as
 * the build it is compared with: `after`, the version published in `data` then, copied in as the
 * current one (null: the folder's first publication).
 */
function fullBuild(after: { data: string; version: string } | null, ...paths: string[]) {
  const data = join(dir, `full-${Math.random().toString(36).slice(2)}`);
  ingest(data, ...paths);
  if (after) {
    const snapshots = join(data, 'snapshots');
    mkdirSync(snapshots, { recursive: true });
    copyFileSync(snapshotFile(after.data, after.version), snapshotFile(snapshots, after.version));
    writeFileSync(join(snapshots, 'CURRENT'), `${after.version}\n`);
  }
  return { data, ...build(data, '--full') };
}
const snapshotFile = (dir: string, version: string) =>
  dir.endsWith('snapshots') ? join(dir, `${version}.sqlite`) : join(dir, 'snapshots', `${version}.sqlite`);

beforeAll(() => {
  dir = tempDir('ri-incremental-');
  const records = sampleRecords();
  const ids = new Set(records.map(idOf));
  // A work the sample cites but does not hold: added by the first partition, so references of
  // unchanged works now point inside the corpus.
  const citing = records.find((r) =>
    (r.referenced_works ?? []).some((ref) => !ids.has(Number(ref.replace('https://openalex.org/W', '')))),
  )!;
  const cited = Number(
    citing
      .referenced_works!.find((ref) => !ids.has(Number(ref.replace('https://openalex.org/W', ''))))!
      .replace('https://openalex.org/W', ''),
  );
  const old = records.slice(0, 40).map(idOf);
  const newTopic = topic(99_001, 'Incremental test topic', 0.97);
  const day1 = '2026-03-02T00:00:00.000000';
  p1 = writeWorks(join(dir, 'works/updated_date=2026-03-02/part_000.jsonl.gz'), [
    work(cited, {
      title: 'Iron and copper in ancient slags',
      publication_date: '2026-03-01',
      publication_year: 2026,
      cited_by_count: 3,
      referenced_works: [`https://openalex.org/W${old[0]}`],
      updated_date: day1,
    }),
    ...Array.from({ length: 30 }, (_, i) =>
      work(9_100_000_000 + i, {
        title: i % 3 === 0 ? `Lithium brines of basin ${i}` : `Zinc isotopes in sediments ${i}`,
        publication_date: `2026-0${1 + (i % 3)}-0${1 + (i % 9)}`,
        publication_year: 2026,
        cited_by_count: i % 5,
        primary_topic: i % 2 ? newTopic : topic(10001, 'Test Topic One', 0.99),
        topics: [i % 2 ? newTopic : topic(10001, 'Test Topic One', 0.99)],
        keywords: [
          { id: 'https://openalex.org/keywords/aaa-new-keyword', display_name: 'A new keyword', score: 0.8 },
        ],
        referenced_works: [old[i % 40], old[(i * 7) % 40], cited, 9_100_000_000 + ((i + 1) % 30)].map(
          (w) => `https://openalex.org/W${w}`,
        ),
        updated_date: day1,
      }),
    ),
  ]);
  // Newer versions of sample works: one with other citations and a title naming other elements,
  // one retracted, one paratext; and one of the first partition's works retracted.
  const day2 = '2026-03-03T00:00:00.000000';
  // A work whose title names elements, with keywords, topics and references: all of them change.
  const withElement = records.find(
    (r, i) =>
      i > 3 &&
      tagElements(String(r.title ?? '')).length > 0 &&
      (r.referenced_works ?? []).length > 0 &&
      ((r.keywords as unknown[]) ?? []).length > 0,
  )!;
  const newer = (r: Record<string, unknown>, overrides: Record<string, unknown>) => ({
    ...r,
    ...overrides,
    updated_date: day2,
  });
  p2 = writeWorks(join(dir, 'works/updated_date=2026-03-03/part_000.jsonl.gz'), [
    newer(withElement, {
      cited_by_count: 500,
      title: 'Gold and silver in quartz veins',
      display_name: null,
      primary_topic: newTopic,
      topics: [newTopic],
      keywords: [
        { id: 'https://openalex.org/keywords/quartz-veins', display_name: 'Quartz veins', score: 0.9 },
      ],
      referenced_works: [`https://openalex.org/W${old[5]}`],
    }),
    newer(records[2]!, { is_retracted: true }),
    newer(records[3]!, { is_paratext: true }),
    work(9_100_000_005, { is_retracted: true, updated_date: day2 }),
    work(9_100_000_100, {
      title: 'Uranium in groundwater',
      publication_date: '2026-03-03',
      updated_date: day2,
    }),
  ]);
}, 60_000);

describe('incremental build', () => {
  it('publishes the same data_version as a full build, after a partition that adds, replaces and removes works, and refuses a stale or damaged cache', () => {
    const data = join(dir, 'incremental');
    ingest(data, SAMPLE);
    const base = build(data);
    expect(base.log).toContain('loading in full: no build cache');
    const before = join(dir, 'cache-before-p1.bin');
    copyFileSync(join(data, 'build-cache/corpus.bin'), before);

    // A partition of new works (one of them cited by unchanged works): `ri build` alone.
    ingest(data, p1);
    const added = build(data);
    expect(added.log).toMatch(/incremental: 31 changed/);
    // The unchanged works' rows copied from the snapshot built with the cache: all but the 31.
    const sampleSize = Number(/loaded (\d+) works/.exec(base.log)![1]);
    expect(added.log).toContain(`(${sampleSize} rows copied from the previous snapshot)`);
    // The references too: the snapshot's, with those to the new works, not all read again.
    expect(added.log).toContain(`references of ${base.version} brought up to date (31 works read again)`);
    const full1 = fullBuild({ data, version: base.version }, SAMPLE, p1);
    expect(added.version).toBe(full1.version);
    expect(snapshotBytes(data, added.version).equals(snapshotBytes(full1.data, full1.version))).toBe(true);
    // Both compared with the snapshot published before: what moved since it is in the file.
    expect(publicationsOf(data, added.version)).toEqual([
      { publication: 0, version: null, since: base.version, changes: expect.any(Number) },
    ]);
    expect(publicationsOf(data, added.version)[0]!.changes).toBeGreaterThan(0);

    // Replaced and removed works, through `ri update` (ingest, tag, build).
    const updated = run(['update', p2, '--data-dir', data]);
    expect(updated.log).toMatch(/incremental: 5 changed/);
    expect(updated.log).toMatch(/rows copied from the previous snapshot/);
    expect(updated.log).toContain(`references of ${added.version} brought up to date (5 works read again)`);
    const full2 = fullBuild({ data, version: added.version }, SAMPLE, p1, p2);
    expect(updated.version).toBe(full2.version);
    expect(updated.version).not.toBe(added.version);
    // The publication before is carried, named by its version now.
    expect(publicationsOf(data, updated.version).map((p) => [p.publication, p.version, p.since])).toEqual([
      [0, null, added.version],
      [1, added.version, base.version],
    ]);

    // The cache from before the first partition: older than the change log now holds.
    copyFileSync(before, join(data, 'build-cache/corpus.bin'));
    const stale = build(data);
    expect(stale.log).toMatch(/loading in full: the build cache \(generation \d+\) is not covered/);
    expect(stale.version).toBe(full2.version);

    // A damaged cache (one byte of its columns flipped), and a truncated one.
    const cacheFile = join(data, 'build-cache/corpus.bin');
    const bytes = readFileSync(cacheFile);
    bytes[bytes.length - 9] = bytes[bytes.length - 9]! ^ 0xff;
    writeFileSync(cacheFile, bytes);
    const damaged = build(data);
    expect(damaged.log).toContain('loading in full: the build cache is damaged');
    expect(damaged.version).toBe(full2.version);
    writeFileSync(cacheFile, readFileSync(cacheFile).subarray(0, 1000));
    const truncated = build(data);
    expect(truncated.log).toMatch(/loading in full: the build cache (is truncated|cannot be read)/);
    expect(truncated.version).toBe(full2.version);

    // The cache of another corpus store (same works, built elsewhere) is not taken for this one's.
    copyFileSync(join(full1.data, 'build-cache/corpus.bin'), cacheFile);
    const other = build(data);
    expect(other.log).toContain('loading in full: the build cache is of another corpus store');
    expect(other.version).toBe(full2.version);

    // Nothing changed: the cache alone gives the same snapshot.
    const again = build(data);
    expect(again.log).toMatch(/incremental: 0 changed/);
    expect(again.version).toBe(full2.version);
    // Compared with itself, nothing moved: it carries the changes it had, so the same bytes.
    expect(again.log).toContain(`changes since ${full2.version}: 0 subjects moved`);
  }, 300_000);

  it('loads in full when the corpus changed without the change log saying so', async () => {
    const data = join(dir, 'unlogged');
    ingest(data, SAMPLE);
    const first = build(data);
    ingest(data, p1);
    // The partition's works are in the store, but its generation's log rows are gone.
    const store = await openCorpusStore(join(data, 'corpus.duckdb'));
    try {
      await store.con.run('DELETE FROM changes WHERE gen = (SELECT max(gen) FROM changes)');
    } finally {
      store.close();
    }
    const unlogged = build(data);
    // It names where the walk stopped: a work of the partition the log lost stands where a cached one was.
    expect(unlogged.log).toMatch(
      /loading in full: the build cache does not match the change log \(W\d+, unchanged since the cache \(at \d+ of its \d+\), is not the next work now \(W9\d{9} at \d+ of \d+\)\)/,
    );
    expect(unlogged.version).toBe(fullBuild({ data, version: first.version }, SAMPLE, p1).version);
  }, 300_000);

  it('copies paper rows only from the snapshot built with the cache, once its bytes are checked', () => {
    const data = join(dir, 'copy-from');
    ingest(data, SAMPLE);
    const base = build(data);
    const expected = fullBuild({ data, version: base.version }, SAMPLE, p1).version;
    const link = join(data, 'build-cache/corpus.bin.snapshot');
    expect(JSON.parse(readFileSync(link, 'utf8')).version).toBe(base.version);
    ingest(data, p1);
    const copy = join(dir, 'copy-from-before-build');
    cpSync(data, copy, { recursive: true });
    const restore = () => {
      rmSync(data, { recursive: true });
      cpSync(copy, data, { recursive: true });
    };

    // The snapshot it names damaged (one byte flipped in a page of its paper rows, which only the
    // copy reads): made in full, the same snapshot.
    const file = join(data, 'snapshots', `${base.version}.sqlite`);
    const db = new Database(file, { readonly: true });
    const pageSize = db.pragma('page_size', { simple: true }) as number;
    const pages = db
      .prepare("SELECT pageno FROM dbstat WHERE name = 'papers' AND pagetype = 'leaf' ORDER BY pageno")
      .pluck()
      .all() as number[];
    db.close();
    const at = (pages[pages.length >> 1]! - 1) * pageSize + (pageSize >> 1);
    const bytes = readFileSync(file);
    bytes[at] = bytes[at]! ^ 0xff;
    writeFileSync(file, bytes);
    const damaged = build(data);
    expect(damaged.log).toMatch(/incremental: 31 changed/);
    expect(damaged.log).toContain(
      `paper rows made in full: the snapshot ${base.version} built with the cache is gone or damaged`,
    );
    expect(damaged.log).not.toMatch(/rows copied/);
    expect(damaged.version).toBe(expected);

    // Gone (pruned): the same.
    restore();
    rmSync(join(data, 'snapshots', `${base.version}.sqlite`));
    const gone = build(data);
    expect(gone.log).toContain('is gone or damaged');
    // With it gone, no snapshot is published to compare with: as a folder's first publication.
    expect(gone.version).toBe(fullBuild(null, SAMPLE, p1).version);

    // A record naming another cache (one written after it, say): not taken for this one's.
    restore();
    writeFileSync(link, JSON.stringify({ cache: 'f'.repeat(64), version: base.version }));
    const other = build(data);
    expect(other.log).toMatch(/incremental: 31 changed/);
    expect(other.log).not.toMatch(/rows copied|made in full/);
    expect(other.version).toBe(expected);

    // And as it should be: copied, the same snapshot, and the record now names it.
    restore();
    const copied = build(data);
    expect(copied.log).toMatch(/rows copied from the previous snapshot/);
    expect(copied.version).toBe(expected);
    expect(JSON.parse(readFileSync(link, 'utf8')).version).toBe(expected);

    // A record naming a sound snapshot that is not the cache's (works elsewhere in it): the copy
    // finds rows of other works where the cache says, is undone, and the rows are made in full.
    const later = fullBuild({ data, version: expected }, SAMPLE, p1, p2);
    copyFileSync(
      join(later.data, 'snapshots', `${later.version}.sqlite`),
      join(data, 'snapshots', `${later.version}.sqlite`),
    );
    const record = JSON.parse(readFileSync(link, 'utf8')) as { cache: string };
    writeFileSync(link, JSON.stringify({ cache: record.cache, version: later.version }));
    ingest(data, p2);
    const mismatched = build(data);
    expect(mismatched.log).toContain(
      'paper rows made in full: the previous snapshot does not hold the rows the build cache says',
    );
    expect(mismatched.log).toContain(
      `references read in full: the snapshot ${later.version} is not the one built with the cache`,
    );
    expect(mismatched.version).toBe(later.version);
  }, 300_000);

  it('publishes when the build cache cannot be written, and the next build is still right', () => {
    const data = join(dir, 'unwritable-cache');
    ingest(data, SAMPLE);
    const first = build(data);
    const cacheFile = join(data, 'build-cache/corpus.bin');
    const kept = join(dir, 'unwritable-cache-corpus.bin');
    copyFileSync(cacheFile, kept);
    ingest(data, p1);
    // A non-empty folder where the cache goes: it cannot be read, nor replaced (even by root).
    rmSync(cacheFile);
    mkdirSync(join(cacheFile, 'in-the-way'), { recursive: true });
    const published = build(data);
    expect(published.log).toMatch(/build cache not written \(.+\): the next build loads more from the store/);
    expect(published.version).toBe(fullBuild({ data, version: first.version }, SAMPLE, p1).version);
    // The old cache back: the change log was kept, so the works since it are still found.
    rmSync(cacheFile, { recursive: true });
    copyFileSync(kept, cacheFile);
    const next = build(data);
    expect(next.log).toMatch(/incremental: 31 changed/);
    expect(next.version).toBe(published.version);
  }, 300_000);

  it('takes works ingested in several runs between two builds, and a re-created store', () => {
    const data = join(dir, 'several');
    ingest(data, SAMPLE);
    const first = build(data);
    ingest(data, p1);
    ingest(data, p2);
    const both = build(data);
    expect(both.log).toMatch(/incremental: 35 changed/);
    expect(both.version).toBe(fullBuild({ data, version: first.version }, SAMPLE, p1, p2).version);

    // The corpus store deleted and ingested again (its generations start over): the old cache is refused.
    rmSync(join(data, 'corpus.duckdb'), { force: true });
    rmSync(join(data, 'corpus.duckdb.wal'), { force: true });
    ingest(data, SAMPLE, p1);
    const recreated = build(data);
    expect(recreated.log).toContain('loading in full: the build cache is of another corpus store');
    expect(recreated.version).toBe(fullBuild({ data, version: both.version }, SAMPLE, p1).version);
  }, 300_000);

  it('shows one version of a work when a partition brings another version of a cached one, as a full build does', () => {
    const records = sampleRecords();
    const keys = new Map<string, number>();
    for (const r of records) {
      const k = versionKey(String(r.display_name ?? r.title ?? ''));
      keys.set(k, (keys.get(k) ?? 0) + 1);
    }
    // A Research Square preprint of the sample, alone with its title: its article arrives later.
    const preprint = records.find(
      (r) =>
        String(r.doi ?? '').includes('10.21203/rs.') &&
        keys.get(versionKey(String(r.display_name ?? r.title))) === 1 &&
        versionKey(String(r.display_name ?? r.title)).length >= 40,
    )!;
    const title = String(preprint.display_name ?? preprint.title);
    const day = '2026-03-04T00:00:00.000000';
    const edition = 'Two language editions of one article on carbonate reservoirs of the Gulf';
    const p3 = writeWorks(join(dir, 'works/updated_date=2026-03-04/part_000.jsonl.gz'), [
      work(9_200_000_001, {
        title,
        doi: 'https://doi.org/10.1000/journal.9200000001',
        publication_year: preprint.publication_year,
        publication_date: preprint.publication_date,
        updated_date: day,
      }),
      work(9_200_000_002, {
        title: edition,
        doi: 'https://doi.org/10.1002/ange.202499999',
        updated_date: day,
      }),
      work(9_200_000_003, {
        title: edition,
        doi: 'https://doi.org/10.1002/anie.202499999',
        cited_by_count: 4,
        updated_date: day,
      }),
    ]);
    const data = join(dir, 'versions');
    ingest(data, SAMPLE);
    const first = build(data);
    ingest(data, p3);
    // The three new works and the cached preprint, now another version of the new article.
    const later = build(data);
    expect(later.log).toMatch(/incremental: 4 changed/);
    const full = fullBuild({ data, version: first.version }, SAMPLE, p3);
    expect(later.version).toBe(full.version);
    expect(snapshotBytes(data, later.version).equals(snapshotBytes(full.data, full.version))).toBe(true);
    const shown = new Database(join(data, 'snapshots', `${later.version}.sqlite`), { readonly: true });
    try {
      const ids = shown.prepare('SELECT work_id FROM papers WHERE work_id >= ?').pluck().all(9_200_000_001);
      expect(ids).toEqual([9_200_000_001, 9_200_000_003]);
      expect(shown.prepare('SELECT count(*) FROM papers WHERE work_id = ?').pluck().get(idOf(preprint))).toBe(
        0,
      );
    } finally {
      shown.close();
    }

    // The article retracted and the shown edition retitled: the works they hid are shown again,
    // found by the title keys the change log kept (their own keys are gone or moved), so the
    // build stays incremental. And a new work titled as a sample article, both shown: that
    // article, a partner shown as before, is not read again (4 + 1 changed, not 6).
    const twin = records.find(
      (r) =>
        r !== preprint &&
        !String(r.doi ?? '').includes('10.21203/rs.') &&
        keys.get(versionKey(String(r.display_name ?? r.title ?? ''))) === 1 &&
        versionKey(String(r.display_name ?? r.title)).length >= 40,
    )!;
    const twinTitle = String(twin.display_name ?? twin.title);
    const day4 = '2026-03-05T00:00:00.000000';
    const p4 = writeWorks(join(dir, 'works/updated_date=2026-03-05/part_000.jsonl.gz'), [
      work(9_200_000_001, {
        title,
        doi: 'https://doi.org/10.1000/journal.9200000001',
        is_retracted: true,
        updated_date: day4,
      }),
      work(9_200_000_003, {
        title: 'A third article on carbonate reservoirs, under a title of its own',
        doi: 'https://doi.org/10.1002/anie.202499999',
        cited_by_count: 4,
        updated_date: day4,
      }),
      work(9_200_000_004, {
        title: twinTitle,
        doi: 'https://doi.org/10.5555/twin.9200000004',
        updated_date: day4,
      }),
    ]);
    ingest(data, p4);
    const after = build(data);
    expect(after.log).toMatch(/incremental: 5 changed/);
    expect(after.log).not.toContain('loading in full');
    const full4 = fullBuild({ data, version: later.version }, SAMPLE, p3, p4);
    expect(after.version).toBe(full4.version);
    expect(snapshotBytes(data, after.version).equals(snapshotBytes(full4.data, full4.version))).toBe(true);
    const again = new Database(join(data, 'snapshots', `${after.version}.sqlite`), { readonly: true });
    try {
      const ids = again.prepare('SELECT work_id FROM papers WHERE work_id >= ?').pluck().all(9_200_000_001);
      expect(ids.sort()).toEqual([9_200_000_002, 9_200_000_003, 9_200_000_004]);
      const rows = again.prepare('SELECT count(*) FROM papers WHERE work_id = ?').pluck();
      expect(rows.get(idOf(preprint))).toBe(1);
      expect(rows.get(idOf(twin))).toBe(1);
    } finally {
      again.close();
    }
  }, 300_000);
});

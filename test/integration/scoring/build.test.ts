import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { decodeSeries } from '../../../src/scoring/history-codec.js';
import type { Resolution } from '../../../src/scoring/resolutions.js';
import { checksummedFile } from '../../../src/snapshot/page-checksums.js';
import {
  PAPER_COLUMN_TYPES,
  type PaperColumnName,
  typedArrayOf,
} from '../../../src/snapshot/paper-columns.js';
import { decodeRanked } from '../../../src/snapshot/ranked.js';
import { buildSnapshot } from '../../../src/snapshot-build/build-snapshot.js';
import { tempDir, topic, work, writeWorks } from '../../helpers/works.js';

/**
 * A corpus small enough to score by hand. Cut-off 2024-06-01 (the latest publication date);
 * the current window is 2023-06-02 .. 2024-06-01.
 *   W1 2024-06-01 "Iron oxide ..."     Fe,O   10 citations  topic T1
 *   W2 2024-03-01 "Nickel catalysts"   Ni      5 citations  topic T1
 *   W3 2023-01-01 "Iron carbide films" Fe,C    2 citations  topic T1 (outside the window)
 *   W4 2024-01-15 geology, no element, citations unknown, no topic, cites W1
 *   W5 2024-05-01 "Nickel-iron alloys" Fe,Ni   citations unknown  topic T1
 */
const T1 = topic(101, 'Iron and nickel materials', 0.98);
const CORPUS = [
  work(1, {
    title: 'Iron oxide nanoparticles',
    publication_date: '2024-06-01',
    cited_by_count: 10,
    primary_topic: T1,
    topics: [T1],
  }),
  work(2, {
    title: 'Nickel catalysts',
    publication_date: '2024-03-01',
    cited_by_count: 5,
    primary_topic: T1,
    topics: [T1],
  }),
  work(3, {
    title: 'Iron carbide films',
    publication_year: 2023,
    publication_date: '2023-01-01',
    cited_by_count: 2,
    primary_topic: T1,
    topics: [T1],
  }),
  work(4, {
    title: 'Geology of sedimentary basins',
    publication_date: '2024-01-15',
    cited_by_count: undefined,
    counts_by_year: undefined,
    primary_topic: null,
    topics: [],
    referenced_works: ['https://openalex.org/W1', 'https://openalex.org/W999'],
  }),
  work(5, {
    title: 'Nickel-iron alloys',
    publication_date: '2024-05-01',
    cited_by_count: undefined,
    primary_topic: T1,
    topics: [T1],
  }),
];

const DAY = 1 / 365.25;
const decay = (days: number) => Math.exp(-(days * DAY) / 3);

let db: Database.Database;
let snapshotDir: string;
let corpusPath: string;
let version: string;

beforeAll(async () => {
  const dir = tempDir();
  corpusPath = join(dir, 'corpus.duckdb');
  snapshotDir = join(dir, 'snapshots');
  await ingest(corpusPath, expandWorksPaths([writeWorks(join(dir, 'w.jsonl'), CORPUS)]));
  const result = await buildSnapshot(corpusPath, snapshotDir);
  version = result.version;
  db = new Database(result.file, { readonly: true });
});

const subject = (type: string, id: string) =>
  db.prepare('SELECT * FROM subjects WHERE type = ? AND id = ?').get(type, id) as Record<
    string,
    number | string | null
  >;
const meta = (key: string) =>
  (db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key) as string) ?? null;

describe('build on a hand-scored corpus', () => {
  /** A whole-corpus column of the snapshot (paper_columns), by ordinal. */
  const column = (name: PaperColumnName) =>
    typedArrayOf(
      PAPER_COLUMN_TYPES[name] as unknown as Float64ArrayConstructor,
      db.prepare('SELECT data FROM paper_columns WHERE name = ?').pluck().get(name) as Buffer,
    ) as unknown as ArrayLike<number>;

  it('finds the cut-off and the window', () => {
    expect(meta('cutoff_date')).toBe('2024-06-01');
    expect(meta('window_start')).toBe('2023-06-02');
    expect(meta('window_papers')).toBe('4');
    expect(meta('papers_with_citations')).toBe('3');
  });

  it('computes RI as fractional papers per 10,000 window papers', () => {
    // Fe: W1 1/2 + W5 1/2 = 1 of 4 -> 2500; Ni: W2 1 + W5 1/2 = 1.5 of 4 -> 3750; O: 1/2 -> 1250; C: outside.
    expect(subject('element', 'Fe').ri).toBe(2500);
    expect(subject('element', 'Ni').ri).toBe(3750);
    expect(subject('element', 'O').ri).toBe(1250);
    expect(subject('element', 'C').ri).toBe(0);
    expect(subject('element', 'Fe').paper_count).toBe(3);
    expect(subject('element', 'Au').paper_count).toBe(0);
  });

  it('computes RIS against the most-researched element', () => {
    // Ages to the cut-off: W1 0 d, W2 92 d, W3 517 d, W5 31 d.
    const rawFe = 0.5 * decay(0) + 0.5 * decay(517) + 0.5 * decay(31);
    const rawNi = 1 * decay(92) + 0.5 * decay(31);
    const max = Math.max(rawFe, rawNi);
    expect(max).toBe(rawNi);
    expect(subject('element', 'Ni').ris).toBe(100);
    expect(subject('element', 'Fe').ris).toBeCloseTo((100 * Math.log1p(rawFe)) / Math.log1p(max), 3);
  });

  it('leaves HRI null when no window paper is high-impact', () => {
    // W1 and W2 form the only 2024 cohort with citations: percentiles 75 and 25, below 90.
    expect(meta('window_high_impact_papers')).toBe('0');
    expect(subject('element', 'Fe').hri).toBeNull();
  });

  it('ranks known citations first, unknown last, with contributions summing to 1', () => {
    const blob = db
      .prepare("SELECT ranked FROM subjects WHERE type = 'element' AND id = 'Fe'")
      .pluck()
      .get() as Buffer;
    const paper = db.prepare('SELECT work_id, citations FROM papers WHERE ordinal = ?');
    const impact = column('impact_score');
    const ranked = decodeRanked(blob).map((r) => ({
      ...(paper.get(r.ordinal) as { work_id: number; citations: number | null }),
      impact_score: Number.isNaN(impact[r.ordinal]!) ? null : impact[r.ordinal],
      ris_contribution: r.risContribution,
    }));
    expect(ranked.map((r) => r.work_id)).toEqual([1, 3, 5]);
    expect(ranked.map((r) => r.impact_score)).toEqual([75, 50, null]);
    expect(ranked[2]!.citations).toBeNull();
    const sum = ranked.reduce((s, r) => s + r.ris_contribution, 0);
    expect(sum).toBeCloseTo(1, 6);
    // W1's share: 0.5 * 1 / rawFe
    const rawFe = 0.5 * decay(0) + 0.5 * decay(517) + 0.5 * decay(31);
    expect(ranked[0]!.ris_contribution).toBeCloseTo(0.5 / rawFe, 6);
    expect(subject('element', 'Fe').total_ranked).toBe(3);
  });

  it('routes a topic to its elements by shared fractional weight', () => {
    const routed = db
      .prepare("SELECT symbol, share FROM routed_elements WHERE type = 'topic' AND id = 'T101' ORDER BY rank")
      .all();
    // Fe 0.5+0.5+0.5, Ni 1+0.5, O 0.5, C 0.5 of 4.
    expect(routed).toEqual([
      { symbol: 'Fe', share: 0.375 },
      { symbol: 'Ni', share: 0.375 },
      { symbol: 'C', share: 0.125 },
      { symbol: 'O', share: 0.125 },
    ]);
  });

  it('writes yearly, monthly and daily history for elements', () => {
    const series = (res: Resolution) =>
      decodeSeries(
        db
          .prepare("SELECT series FROM history WHERE type = 'element' AND id = 'Fe' AND resolution = ?")
          .pluck()
          .get(res) as Buffer,
        res,
      );
    const yearly = series('yearly');
    expect(yearly.period).toEqual(['2023', '2024']);
    // 2023: W3 is the only paper: 1/2 of 1 -> 5000. 2024: W1 + W5 halves of 4 papers -> 2500.
    expect(yearly.ri).toEqual([5000, 2500]);
    expect(yearly.papers).toEqual([1, 2]);
    expect(series('monthly').period).toEqual(['2023-01', '2024-05', '2024-06']);
    expect(series('daily').period).toEqual(['2023-01-01', '2024-05-01', '2024-06-01']);
    const topicHistory = db
      .prepare("SELECT resolution FROM history WHERE type = 'topic' AND id = 'T101'")
      .pluck()
      .all();
    expect(topicHistory.sort()).toEqual(['monthly', 'yearly']);
  });

  it('puts a paper without a topic in the community of the papers it cites', () => {
    const w4 = db.prepare('SELECT ordinal, citations FROM papers WHERE work_id = 4').get() as {
      ordinal: number;
      citations: number | null;
    };
    expect(w4.citations).toBeNull();
    expect(column('impact_score')[w4.ordinal]).toBeNaN();
    expect(column('cluster')[w4.ordinal]).toBe(101);
    expect(column('cluster_from_citations')[w4.ordinal]).toBe(1);
    // Its neighbours took theirs from their own topics.
    const others = db.prepare('SELECT ordinal FROM papers WHERE work_id <> 4').pluck().all() as number[];
    for (const o of others) expect(column('cluster_from_citations')[o]).toBe(0);
  });

  it('indexes titles and subject names for full-text search', () => {
    const hits = db.prepare("SELECT rowid FROM papers_fts WHERE papers_fts MATCH 'nickel'").all();
    expect(hits).toHaveLength(2);
    const topics = db
      .prepare("SELECT id FROM subjects_fts WHERE subjects_fts MATCH 'nickel' AND type = 'topic'")
      .pluck()
      .all();
    expect(topics).toEqual(['T101']);
  });

  it('gives the same data_version for the same corpus (content hash), its pages checksummed', async () => {
    const again = await buildSnapshot(corpusPath, snapshotDir);
    expect(again.version).toBe(version);
    expect(again.changed).toBe(false);
    // The checksums are bytes of the file, and the same ones each time.
    expect(checksummedFile(again.file)).toBe(true);
  });
});

describe('HRI', () => {
  it('is the share among high-impact papers of the window', async () => {
    // Ten papers of one field and year, citations 1..10: only the most cited (W10) reaches the 90th percentile.
    const papers = Array.from({ length: 10 }, (_, i) =>
      work(i + 1, {
        title: i === 9 ? 'Copper oxide' : i < 5 ? 'Copper sites' : 'Zinc sites',
        cited_by_count: i + 1,
        publication_date: '2024-06-01',
      }),
    );
    const dir = tempDir();
    await ingest(join(dir, 'c.duckdb'), expandWorksPaths([writeWorks(join(dir, 'w.jsonl'), papers)]));
    const result = await buildSnapshot(join(dir, 'c.duckdb'), join(dir, 's'));
    const snap = new Database(result.file, { readonly: true });
    const hri = (id: string) =>
      snap.prepare("SELECT hri FROM subjects WHERE type = 'element' AND id = ?").pluck().get(id);
    // W10 is Cu, O (1/2 each) and the only high-impact paper: HRI = 10,000 x 0.5 / 1.
    expect(hri('Cu')).toBe(5000);
    expect(hri('O')).toBe(5000);
    expect(hri('Zn')).toBe(0);
    snap.close();
  });
});

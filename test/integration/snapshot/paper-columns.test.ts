import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadCandidates, RESEARCH_COLUMNS, references } from '../../../src/core/research/candidates.js';
import { LENSES, research, warmResearch } from '../../../src/core/research.js';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { CHECKPOINT_PAPERS } from '../../../src/snapshot/packed-refs.js';
import {
  adoptPaperColumns,
  dateNumber,
  PAPER_COLUMN_TYPES,
  paperColumn,
  sharePaperColumns,
} from '../../../src/snapshot/paper-columns.js';
import { Snapshot } from '../../../src/snapshot/snapshot.js';
import { sampleDataDir } from '../../helpers/sample.js';

/**
 * The whole-corpus columns research reads of its candidates hold what the paper rows hold (for
 * the references: what the corpus store's records cite, among the corpus's papers), so reading
 * them in memory gives the answers the rows gave.
 */
let snapshot: Snapshot;
let corpusPath: string;
beforeAll(async () => {
  const sample = await sampleDataDir();
  snapshot = new Snapshot(sample.version, snapshotFile(sample.snapshots, sample.version));
  corpusPath = `${sample.dataDir}/corpus.duckdb`;
});
afterAll(() => snapshot.retire());

interface Row {
  ordinal: number;
  work_id: number;
  year: number | null;
  pub_date: string | null;
}

function paperRows(): Row[] {
  const db = new Database(snapshot.path, { readonly: true });
  try {
    return db.prepare('SELECT ordinal, work_id, year, pub_date FROM papers ORDER BY ordinal').all() as Row[];
  } finally {
    db.close();
  }
}

describe('paper columns', () => {
  it('hold every paper, one value each', () => {
    const rows = paperRows();
    expect(rows.length).toBeGreaterThan(1000);
    for (const name of Object.keys(PAPER_COLUMN_TYPES) as (keyof typeof PAPER_COLUMN_TYPES)[]) {
      const expected =
        name === 'refs_start'
          ? rows.length + 1
          : name === 'refs_checkpoints'
            ? Math.ceil(rows.length / CHECKPOINT_PAPERS)
            : name === 'refs_packed'
              ? paperColumn(snapshot, 'refs_packed').length
              : rows.length;
      expect(paperColumn(snapshot, name).length, name).toBe(expected);
    }
  });

  it('give each candidate the values of its paper row, and the reader the same numbers', () => {
    const rows = paperRows();
    const candidates = loadCandidates(
      snapshot,
      rows.map((r) => r.ordinal),
    );
    // The rows as the service reads them: their impact score and community from the columns.
    const read = new Map(snapshot.reader.paperRows(rows.map((r) => r.ordinal)).map((r) => [r.ordinal, r]));
    const workId = paperColumn(snapshot, 'work_id');
    let dated = 0;
    let scored = 0;
    for (const r of rows) {
      const c = candidates.get(r.ordinal)!;
      const served = read.get(r.ordinal)!;
      expect(workId[r.ordinal]).toBe(r.work_id);
      expect(c).toEqual({
        ordinal: r.ordinal,
        year: r.year,
        pub_date: r.pub_date === null ? null : dateNumber(r.pub_date),
        impact_score: served.impact_score,
        cluster: served.cluster,
      });
      if (r.pub_date) dated++;
      if (c.impact_score !== null) scored++;
    }
    expect(dated).toBeGreaterThan(0);
    expect(scored).toBeGreaterThan(0);
    // Dates keep their order as numbers.
    const dates = rows.filter((r) => r.pub_date).map((r) => r.pub_date!);
    const byText = [...dates].sort();
    expect([...dates].sort((a, b) => dateNumber(a) - dateNumber(b))).toEqual(byText);
  });

  it('give each paper the corpus papers its record cites', async () => {
    const rows = paperRows();
    const ordinalOf = new Map(rows.map((r) => [r.work_id, r.ordinal]));
    const store = await openCorpusStore(corpusPath);
    try {
      const cites = new Map<number, number[]>();
      for (const { id, ref } of await store.rows<{ id: number; ref: number }>(
        'SELECT id::DOUBLE AS id, unnest(refs)::DOUBLE AS ref FROM works',
      )) {
        const [from, to] = [ordinalOf.get(id), ordinalOf.get(ref)];
        // Self-citations are not references (the corpus leaves them out).
        if (from === undefined || to === undefined || from === to) continue;
        cites.set(from, [...(cites.get(from) ?? []), to]);
      }
      expect(cites.size).toBeGreaterThan(100);
      for (const r of rows) {
        const expected = (cites.get(r.ordinal) ?? []).sort((a, b) => a - b);
        expect(
          [...references(snapshot)(r.ordinal)].sort((a, b) => a - b),
          `W${r.work_id}`,
        ).toEqual(expected);
      }
    } finally {
      store.close();
    }
  });
});

describe('doi_order', () => {
  it('orders the papers as SQLite orders their DOIs (no DOI last, ties by ordinal)', () => {
    const db = new Database(snapshot.path, { readonly: true });
    try {
      const expected = db
        .prepare('SELECT ordinal FROM papers ORDER BY doi IS NULL, doi, ordinal')
        .pluck()
        .all() as number[];
      expect([...paperColumn(snapshot, 'doi_order')]).toEqual(expected);
    } finally {
      db.close();
    }
  });

  it('finds every DOI, the first paper that has it, and nothing for a DOI not in the corpus', () => {
    const db = new Database(snapshot.path, { readonly: true });
    try {
      const firsts = db
        .prepare('SELECT doi, min(ordinal) AS ordinal FROM papers WHERE doi IS NOT NULL GROUP BY doi')
        .all() as { doi: string; ordinal: number }[];
      expect(firsts.length).toBeGreaterThan(1000);
      for (const { doi, ordinal } of firsts)
        expect(snapshot.reader.paperByDoi(doi)?.ordinal, doi).toBe(ordinal);
      const known = new Set(firsts.map((f) => f.doi));
      // Next to real DOIs, before the first and after the last: absent.
      const sorted = [...known].sort();
      for (const doi of [
        `${sorted[0]!.slice(0, -1)}`,
        `${sorted[10]!}x`,
        `${sorted.at(-1)!}z`,
        '10.0000/none',
        '',
      ])
        if (!known.has(doi)) expect(snapshot.reader.paperByDoi(doi), doi).toBeUndefined();
      expect(snapshot.reader.paperByDoi(firsts[0]!.doi)?.impact_score).not.toBeUndefined();
    } finally {
      db.close();
    }
  });
});

describe('dateNumber', () => {
  it('keeps the order of ISO dates, and none is 0', () => {
    expect(dateNumber('2024-03-07')).toBe(20240307);
    expect(dateNumber('0999-12-31')).toBe(9991231);
    expect(dateNumber(null)).toBe(0);
    expect(dateNumber('2023-12-31')).toBeLessThan(dateNumber('2024-01-01'));
  });
});

describe('paperColumn', () => {
  it('answers data_unavailable for a snapshot written before the column existed', () => {
    const memo = new Map<string, unknown>();
    const older = {
      version: '0000000000000000',
      meta: {},
      reader: { paperColumn: (name: string) => (name === 'year' ? Buffer.from([7, 0, 9, 0]) : undefined) },
      memoize: <T>(key: string, compute: () => T): T => {
        if (!memo.has(key)) memo.set(key, compute());
        return memo.get(key) as T;
      },
    };
    expect([...paperColumn(older, 'year')]).toEqual([7, 9]);
    expect(() => paperColumn(older, 'refs_packed')).toThrow(
      expect.objectContaining({ code: 'data_unavailable' }),
    );
  });
});

describe('warmResearch', () => {
  it('reads every column research reads, so that a question then reads none', () => {
    const fresh = new Snapshot(snapshot.version, snapshot.path);
    try {
      const read = vi.spyOn(fresh.reader, 'paperColumn');
      warmResearch(fresh);
      // Among them the references' three (packed-refs.ts).
      expect(RESEARCH_COLUMNS).toEqual(
        expect.arrayContaining(['refs_start', 'refs_packed', 'refs_checkpoints']),
      );
      expect(new Set(read.mock.calls.map(([name]) => name))).toEqual(new Set(RESEARCH_COLUMNS));
      read.mockClear();
      const answer = research(
        fresh,
        { q: 'reservoir porosity carbonate', pageSize: 10, lenses: [...LENSES], page: 1 },
        { hriAvailable: true, publicUrl: 'https://ri.example' },
      );
      expect(answer.lists.foundational!.length).toBeGreaterThan(0);
      expect(read).not.toHaveBeenCalled();
    } finally {
      fresh.retire();
    }
  });
});

describe('shared columns', () => {
  it('are the same values in shared memory, which the sharing snapshot and another one then read', () => {
    const names = ['year', 'impact_score', 'refs_start', 'refs_packed'] as const;
    const own = new Snapshot(snapshot.version, snapshot.path);
    const sharing = new Snapshot(snapshot.version, snapshot.path);
    const adopting = new Snapshot(snapshot.version, snapshot.path);
    try {
      const shared = sharePaperColumns(sharing, names);
      // A column read before the shared ones came is dropped for them.
      const before = paperColumn(adopting, 'refs_packed');
      const read = vi.spyOn(adopting.reader, 'paperColumn');
      adoptPaperColumns(adopting, shared);
      expect(paperColumn(adopting, 'refs_packed')).not.toBe(before);
      for (const name of names) {
        expect(shared[name]).toBeInstanceOf(SharedArrayBuffer);
        for (const s of [sharing, adopting]) {
          const column = paperColumn(s, name);
          expect(column.buffer).toBe(shared[name]);
          expect([...column]).toEqual([...paperColumn(own, name)]);
        }
      }
      expect(read).not.toHaveBeenCalled();
      // A column it was not given it reads itself.
      paperColumn(adopting, 'pub_date');
      expect(read).toHaveBeenCalledWith('pub_date');
      const question = { q: 'reservoir porosity carbonate', pageSize: 10, lenses: [...LENSES], page: 1 };
      const viewer = { hriAvailable: true, publicUrl: 'https://ri.example' };
      expect(research(adopting, question, viewer)).toEqual(research(own, question, viewer));
    } finally {
      for (const s of [own, sharing, adopting]) s.retire();
    }
  });
});

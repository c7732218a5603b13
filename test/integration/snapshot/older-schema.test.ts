import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSeries } from '../../../src/scoring/history-codec.js';
import type { Resolution } from '../../../src/scoring/resolutions.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { paperColumn } from '../../../src/snapshot/paper-columns.js';
import { Snapshot } from '../../../src/snapshot/snapshot.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

/**
 * A kept snapshot of schema 3 (before the moving numbers left the paper rows, before binary
 * history and the DOI column) still answers reads pinned to its data_version as it did: made here
 * from the sample's snapshot by putting its content back in the older shape.
 */
let current: Snapshot;
let older: Snapshot;
beforeAll(async () => {
  const sample = await sampleDataDir();
  const file = snapshotFile(sample.snapshots, sample.version);
  current = new Snapshot(sample.version, file);
  const copy = join(tempDir('ri-schema3-'), 'older.sqlite');
  copyFileSync(file, copy);
  const db = new Database(copy);
  const impact = paperColumn(current, 'impact_score');
  const percentile = paperColumn(current, 'citation_percentile');
  const cluster = paperColumn(current, 'cluster');
  const orNull = (v: number) => (Number.isNaN(v) ? null : v);
  db.exec(`ALTER TABLE papers ADD COLUMN impact_score REAL;
    ALTER TABLE papers ADD COLUMN citation_percentile REAL;
    ALTER TABLE papers ADD COLUMN cluster INTEGER;
    CREATE INDEX papers_doi ON papers (doi);
    DELETE FROM paper_columns WHERE name IN ('citation_percentile', 'high_impact', 'cluster_from_citations', 'work_id', 'doi_order');
    UPDATE meta SET value = '3' WHERE key = 'schema_version'`);
  const setRow = db.prepare(
    'UPDATE papers SET impact_score = ?, citation_percentile = ?, cluster = ? WHERE ordinal = ?',
  );
  const setSeries = db.prepare('UPDATE history SET series = ? WHERE type = ? AND id = ? AND resolution = ?');
  db.transaction(() => {
    for (let p = 0; p < impact.length; p++)
      setRow.run(orNull(impact[p]!), orNull(percentile[p]!), cluster[p] === -1 ? null : cluster[p], p);
    const rows = db.prepare('SELECT type, id, resolution, series FROM history').all() as {
      type: string;
      id: string;
      resolution: Resolution;
      series: Buffer;
    }[];
    for (const r of rows)
      setSeries.run(JSON.stringify(decodeSeries(r.series, r.resolution)), r.type, r.id, r.resolution);
  })();
  db.close();
  older = new Snapshot(sample.version, copy);
});
afterAll(() => {
  current.retire();
  older.retire();
});

describe('a kept snapshot of schema 3', () => {
  it('gives the same paper rows, papers by DOI and history series', () => {
    const ordinals = Array.from({ length: paperColumn(current, 'year').length }, (_, p) => p);
    const byOrdinal = <T extends { ordinal: number }>(rows: T[]) =>
      [...rows].sort((a, b) => a.ordinal - b.ordinal);
    const rows = byOrdinal(current.reader.paperRows(ordinals));
    expect(rows.length).toBeGreaterThan(1000);
    expect(rows.some((r) => r.impact_score !== null && r.citation_percentile !== null)).toBe(true);
    expect(byOrdinal(older.reader.paperRows(ordinals))).toEqual(rows);
    for (const r of rows.filter((r) => r.doi).slice(0, 50))
      expect(older.reader.paperByDoi(r.doi!)).toEqual(current.reader.paperByDoi(r.doi!));
    for (const [type, id, resolution] of [
      ['element', 'Fe', 'yearly'],
      ['element', 'O', 'daily'],
      ['element', 'Ni', 'monthly'],
    ] as const) {
      const series = current.reader.series(type, id, resolution);
      expect(series?.period.length).toBeGreaterThan(0);
      expect(older.reader.series(type, id, resolution)).toEqual(series);
    }
  });
});

import { packedReferences } from '../../snapshot/packed-refs.js';
import { paperColumn } from '../../snapshot/paper-columns.js';
import type { ColumnQueries, SnapshotView } from '../../snapshot/reader.js';

/**
 * What the lists, the evidence and the communities read of every candidate paper, from the
 * snapshot's whole-corpus columns (kept in memory with the snapshot): the full rows are read only
 * for the papers shown.
 */
export interface CandidateRow {
  ordinal: number;
  year: number | null;
  /** The publication date as YYYYMMDD (its order is the date's), null when unknown. */
  pub_date: number | null;
  impact_score: number | null;
  cluster: number | null;
}

/** Every column research reads. */
export const RESEARCH_COLUMNS = [
  'year',
  'pub_date',
  'impact_score',
  'citation_percentile',
  'cluster',
  'refs_start',
  'refs_packed',
  'refs_checkpoints',
] as const;

/** Every column research reads, loaded (each once per snapshot). */
export function warmCandidates(snapshot: SnapshotView<ColumnQueries>): void {
  for (const name of RESEARCH_COLUMNS) paperColumn(snapshot, name);
}

/** The candidates' columns, by ordinal. */
export function loadCandidates(
  snapshot: SnapshotView<ColumnQueries>,
  ordinals: readonly number[],
): Map<number, CandidateRow> {
  const year = paperColumn(snapshot, 'year');
  const pubDate = paperColumn(snapshot, 'pub_date');
  const impact = paperColumn(snapshot, 'impact_score');
  const cluster = paperColumn(snapshot, 'cluster');
  const rows = new Map<number, CandidateRow>();
  for (const ordinal of ordinals) {
    if (ordinal < 0 || ordinal >= year.length) continue;
    rows.set(ordinal, {
      ordinal,
      year: year[ordinal] || null,
      pub_date: pubDate[ordinal] || null,
      impact_score: Number.isNaN(impact[ordinal]) ? null : impact[ordinal]!,
      cluster: cluster[ordinal] === -1 ? null : cluster[ordinal]!,
    });
  }
  return rows;
}

/** The papers each paper cites (ordinals, ascending), unpacked from the snapshot's columns. */
export function references(snapshot: SnapshotView<ColumnQueries>): (ordinal: number) => Int32Array {
  return packedReferences(
    paperColumn(snapshot, 'refs_start'),
    paperColumn(snapshot, 'refs_packed'),
    paperColumn(snapshot, 'refs_checkpoints'),
  );
}

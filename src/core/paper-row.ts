import type { Snapshot } from '../snapshot/snapshot.js';

/** A row of the snapshot's papers table, as the paper lists and the research search read it. */
export interface PaperRow {
  ordinal: number;
  work_id: number;
  doi: string | null;
  title: string | null;
  venue: string | null;
  year: number | null;
  pub_date: string | null;
  citations: number | null;
  impact_score: number | null;
  citation_percentile: number | null;
  cluster: number | null;
  elements: string;
  keywords: string;
  refs: Buffer | null;
}

export const PAPER_COLUMNS =
  'ordinal, work_id, doi, title, venue, year, pub_date, citations, impact_score, citation_percentile, cluster, elements, keywords, refs';

/** The paper's URL: its DOI where it has one, else its OpenAlex record. */
export function paperLink(p: Pick<PaperRow, 'doi' | 'work_id'>): string {
  return p.doi ? `https://doi.org/${p.doi}` : `https://openalex.org/W${p.work_id}`;
}

/** Papers by ordinal (any order, missing ones left out), with one statement per snapshot. */
export function loadPaperRows(snapshot: Snapshot, ordinals: readonly number[]): Map<number, PaperRow> {
  if (ordinals.length === 0) return new Map();
  const stmt = snapshot.memoize('paper-rows', () =>
    snapshot.db.prepare(
      `SELECT ${PAPER_COLUMNS} FROM papers WHERE ordinal IN (SELECT value FROM json_each(?))`,
    ),
  );
  const rows = stmt.all(JSON.stringify(ordinals)) as PaperRow[];
  return new Map(rows.map((r) => [r.ordinal, r]));
}

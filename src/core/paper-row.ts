import type { PaperQueries, PaperRow, SnapshotView } from '../snapshot/reader.js';

/** The paper's OpenAlex work id, as OpenAlex writes it (W2741809807). */
export function openAlexId(p: Pick<PaperRow, 'work_id'>): string {
  return `W${p.work_id}`;
}

/** The paper's URL: its DOI where it has one, else its OpenAlex record. */
export function paperLink(p: Pick<PaperRow, 'doi' | 'work_id'>): string {
  return p.doi ? `https://doi.org/${p.doi}` : `https://openalex.org/${openAlexId(p)}`;
}

/** Papers by ordinal (any order, missing ones left out). */
export function loadPaperRows(
  snapshot: SnapshotView<Pick<PaperQueries, 'paperRows'>>,
  ordinals: readonly number[],
): Map<number, PaperRow> {
  if (ordinals.length === 0) return new Map();
  return new Map(snapshot.reader.paperRows(ordinals).map((r) => [r.ordinal, r]));
}

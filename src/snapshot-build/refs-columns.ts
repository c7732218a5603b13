import type { CorpusStore } from '../ingest/corpus-store.js';
import { REF_PAIRS_SQL } from '../scoring/corpus.js';
import { paperColumnParts } from '../snapshot/column-parts.js';

const PAIRS = `(${REF_PAIRS_SQL}) AS pairs(o, v)`;

/**
 * The snapshot's columns of in-corpus references, refs_start and refs (paper-columns.ts: a CSR,
 * each paper's cited ordinals ascending), streamed from the corpus store instead of loaded (0.9
 * GB at 10M works): the counts per paper first, then the pairs in (citing, cited) order, copied
 * into one part of the column at a time. `insert` writes one row of paper_columns.
 */
export async function writeRefsColumns(
  store: CorpusStore,
  n: number,
  insert: (row: string, bytes: Buffer) => void,
  partBytes?: number,
): Promise<void> {
  const start = new Int32Array(n + 1);
  await store.forEachChunk(`SELECT o, count(*)::INTEGER FROM ${PAIRS} GROUP BY o`, (chunk) => {
    const [o, count] = [chunk.getColumnVector(0), chunk.getColumnVector(1)];
    for (let i = 0; i < chunk.rowCount; i++) start[(o.getItem(i) as number) + 1] = count.getItem(i) as number;
  });
  for (let p = 0; p < n; p++) start[p + 1]! += start[p]!;
  for (const { row, start: from, end } of paperColumnParts('refs_start', start.byteLength, partBytes))
    insert(row, Buffer.from(start.buffer, from, end - from));

  const parts = paperColumnParts('refs', start[n]! * 4, partBytes);
  // One part's buffer, filled and written in turn (a part is a whole number of values).
  const buffer = new Int32Array(parts.length > 0 ? (parts[0]!.end - parts[0]!.start) / 4 : 0);
  let part = 0;
  let filled = 0;
  let at = 0; // the position in the whole column of the next value
  const flush = () => {
    const { row, start: from, end } = parts[part++]!;
    insert(row, Buffer.from(buffer.buffer, 0, end - from));
    filled = 0;
  };
  await store.forEachChunk(`SELECT o, v FROM ${PAIRS} ORDER BY o, v`, (chunk) => {
    const [o, v] = [chunk.getColumnVector(0), chunk.getColumnVector(1)];
    for (let i = 0; i < chunk.rowCount; i++) {
      const p = o.getItem(i) as number;
      // A pair the count did not see (the store changed between the two reads) lands outside its
      // paper's range: refuse rather than build from it.
      if (at < start[p]! || at >= start[p + 1]!)
        throw new Error('the corpus store changed while the build read it');
      buffer[filled++] = v.getItem(i) as number;
      at++;
      if (filled * 4 === parts[part]!.end - parts[part]!.start) flush();
    }
  });
  if (at !== start[n]) throw new Error('the corpus store changed while the build read it');
  // An empty column is still one (empty) row, as paperColumnRows writes it.
  if (part < parts.length) flush();
}

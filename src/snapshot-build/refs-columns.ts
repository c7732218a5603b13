import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import type { CorpusStore } from '../ingest/corpus-store.js';
import { REF_PAIRS_SQL } from '../scoring/corpus.js';
import { paperColumnParts } from '../snapshot/column-parts.js';

/**
 * The in-corpus references, read from the corpus store into a file (each paper's cited ordinals
 * ascending, papers in ordinal order: the values of the snapshot's refs column) and each paper's
 * start in it (refs_start), instead of loaded (0.9 GB at 10M works).
 */
export interface StagedRefs {
  start: Int32Array;
  file: string;
}

/** Values written to the staging file at a time. */
const STAGE_VALUES = 1 << 18;

/**
 * Stages the references (StagedRefs) from one read of the pairs in (citing, cited) order. Made
 * while the corpus is loaded, not while the snapshot is written: DuckDB's working memory (a few
 * hundred MB at any size) then does not add to the writer's and the scoring's.
 */
export async function stageRefs(store: CorpusStore, n: number, file: string): Promise<StagedRefs> {
  const start = new Int32Array(n + 1);
  const buffer = new Int32Array(STAGE_VALUES);
  let filled = 0;
  const fd = openSync(file, 'w');
  const flush = () => {
    const bytes = new Uint8Array(buffer.buffer, 0, filled * 4);
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    filled = 0;
  };
  try {
    await store.forEachChunk(`SELECT o, v FROM (${REF_PAIRS_SQL}) AS pairs(o, v) ORDER BY o, v`, (chunk) => {
      const [o, v] = [chunk.getColumnVector(0), chunk.getColumnVector(1)];
      for (let i = 0; i < chunk.rowCount; i++) {
        start[(o.getItem(i) as number) + 1]!++;
        buffer[filled++] = v.getItem(i) as number;
        if (filled === STAGE_VALUES) flush();
      }
    });
    flush();
  } finally {
    closeSync(fd);
  }
  for (let p = 0; p < n; p++) start[p + 1]! += start[p]!;
  return { start, file };
}

/**
 * The snapshot's columns of references, refs_start and refs (paper-columns.ts: a CSR), from the
 * staged references, the refs column read from its file one part at a time into one buffer.
 * `insert` writes one row of paper_columns.
 */
export function writeRefsColumns(
  refs: StagedRefs,
  insert: (row: string, bytes: Buffer) => void,
  partBytes?: number,
): void {
  const { start } = refs;
  for (const { row, start: from, end } of paperColumnParts('refs_start', start.byteLength, partBytes))
    insert(row, Buffer.from(start.buffer, start.byteOffset + from, end - from));
  const parts = paperColumnParts('refs', start[start.length - 1]! * 4, partBytes);
  const buffer = Buffer.allocUnsafe(parts[0]!.end);
  const fd = openSync(refs.file, 'r');
  try {
    for (const { row, start: from, end } of parts) {
      for (let at = 0; at < end - from; ) {
        const got = readSync(fd, buffer, at, end - from - at, from + at);
        if (got === 0) throw new Error('the staged references are truncated');
        at += got;
      }
      insert(row, buffer.subarray(0, end - from));
    }
  } finally {
    closeSync(fd);
  }
}

import { ServiceError } from '../core/errors.js';
import { paperColumn, typedArrayOf } from './paper-columns.js';
import type { RefsQueries, SnapshotView } from './reader.js';

/**
 * The references (each paper's cited ordinals, ascending; papers in ordinal order) in table
 * paper_refs, REFS_BLOCK values to a row, and each paper's start among them in the column
 * refs_start (paper-columns.ts). They stay on disk: a question reads the blocks of the papers it
 * asks about (a thousand papers, a few MB), where a replica kept them whole in memory before
 * (about 90 MB at 1M works, 1 GB at 10M: the most of a replica's memory, growing with the corpus).
 */

/** Values to a row: 4 KB, one page of the snapshot's 8 KB pages, so most papers' are one read. */
export const REFS_BLOCK = 1024;

/** The blocks of paper_refs (REFS_BLOCK values each, the last one shorter) of `total` values. */
export function refsBlocks(total: number): { block: number; start: number; end: number }[] {
  const out = [];
  for (let block = 0, at = 0; at < total; block++, at += REFS_BLOCK)
    out.push({ block, start: at, end: Math.min(total, at + REFS_BLOCK) });
  return out;
}

/**
 * The papers each of `ordinals` cites (ordinals ascending), in the order asked: each block read
 * once, in one query. An ordinal outside the corpus cites nothing.
 */
export function referencesOf(snapshot: SnapshotView<RefsQueries>, ordinals: readonly number[]): Int32Array[] {
  const start = paperColumn(snapshot, 'refs_start');
  const n = start.length - 1;
  const wanted = new Set<number>();
  for (const o of ordinals) {
    if (!(o >= 0 && o < n) || start[o] === start[o + 1]) continue;
    for (let b = Math.floor(start[o]! / REFS_BLOCK); b * REFS_BLOCK < start[o + 1]!; b++) wanted.add(b);
  }
  const blocks = [...wanted].sort((a, b) => a - b);
  const read = blocks.length === 0 ? [] : snapshot.reader.referenceBlocks(blocks);
  if (!read || read.length !== blocks.length) {
    throw new ServiceError(
      'data_unavailable',
      "This snapshot was built by an older version without the table 'paper_refs'; rebuild it with `ri build`.",
    );
  }
  const values = new Map(blocks.map((b, i) => [b, typedArrayOf(Int32Array, read[i]!)]));
  return ordinals.map((o) => {
    if (!(o >= 0 && o < n)) return new Int32Array(0);
    const [from, to] = [start[o]!, start[o + 1]!];
    const first = Math.floor(from / REFS_BLOCK);
    // Most papers' references lie in one block: a view of it; else copied from each in turn.
    if (to <= (first + 1) * REFS_BLOCK) {
      const block = values.get(first);
      return block ? block.subarray(from - first * REFS_BLOCK, to - first * REFS_BLOCK) : new Int32Array(0);
    }
    const out = new Int32Array(to - from);
    for (let i = from; i < to; ) {
      const b = Math.floor(i / REFS_BLOCK);
      const end = Math.min(to, (b + 1) * REFS_BLOCK);
      out.set(values.get(b)!.subarray(i - b * REFS_BLOCK, end - b * REFS_BLOCK), i - from);
      i = end;
    }
    return out;
  });
}

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { loadCorpusReporting, REF_PAIRS_SQL } from '../../../src/scoring/corpus.js';
import { DEFAULT_PARAMETERS } from '../../../src/scoring/parameters.js';
import { paperColumnRows } from '../../../src/snapshot/column-parts.js';
import { CHECKPOINT_PAPERS } from '../../../src/snapshot/packed-refs.js';
import { stageRefs, writeRefsColumns } from '../../../src/snapshot-build/refs-columns.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';

/** W1..W12, each citing a few others (out of order, one twice), itself, and a work not in the corpus. */
const cites = (...ids: number[]) => ids.map((id) => `https://openalex.org/W${id}`);
const CITING = Array.from({ length: 12 }, (_, i) =>
  work(i + 1, {
    publication_date: `2024-01-${String(12 - i).padStart(2, '0')}`,
    referenced_works: cites(((i * 7) % 12) + 1, ((i * 5) % 12) + 1, (i % 3) + 1, (i % 3) + 1, i + 1, 999),
  }),
);

/**
 * The rows of paper_columns the build writes for the references, staged from the store and read
 * back a part at a time, and those it wrote from the CSR in memory (each paper's cited ordinals
 * sorted): the same bytes, whole or in parts.
 */
async function streamedAndInMemory(records: Record<string, unknown>[], partBytes: number[]) {
  const dir = tempDir('ri-refs-columns-');
  const corpusPath = join(dir, 'corpus.duckdb');
  await ingest(corpusPath, expandWorksPaths([writeWorks(join(dir, 'w.jsonl'), records)]));
  const store = await openCorpusStore(corpusPath);
  try {
    const { corpus } = await loadCorpusReporting(store, DEFAULT_PARAMETERS, null);
    const n = corpus.n;
    const [from, to] = (await store.intColumns(REF_PAIRS_SQL, 2)) as [Int32Array, Int32Array];
    const lists = Array.from({ length: n }, () => [] as number[]);
    for (let i = 0; i < from.length; i++) lists[from[i]!]!.push(to[i]!);
    const start = new Int32Array(n + 1);
    lists.forEach((l, p) => {
      start[p + 1] = start[p]! + l.length;
    });
    const sorted = lists.map((l) => l.sort((a, b) => a - b));
    // Packed by hand: LEB128 of the first value, then of each gap; a checkpoint each few papers.
    const packed: number[] = [];
    const checkpoints: number[] = [];
    sorted.forEach((l, p) => {
      if (p % CHECKPOINT_PAPERS === 0) checkpoints.push(packed.length);
      l.forEach((v, i) => {
        let x = i === 0 ? v : v - l[i - 1]!;
        for (; x >= 128; x = Math.floor(x / 128)) packed.push((x % 128) + 128);
        packed.push(x);
      });
    });
    const staged = await stageRefs(store, n, join(dir, 'refs'));
    const out = [];
    for (const part of partBytes) {
      const streamed: [string, Buffer][] = [];
      // Each part copied: the writer hands them over in one buffer, in turn.
      writeRefsColumns(staged, (row, bytes) => streamed.push([row, Buffer.from(bytes)]), part);
      const inMemory = [
        ...paperColumnRows('refs_start', Buffer.from(start.buffer), part),
        ...paperColumnRows('refs_checkpoints', Buffer.from(Float64Array.from(checkpoints).buffer), part),
        ...paperColumnRows('refs_packed', Buffer.from(packed), part),
      ];
      out.push({ streamed, inMemory, pairs: from.length });
    }
    return out;
  } finally {
    store.close();
  }
}

describe('the references columns staged from the store', () => {
  it('are the CSR in memory byte for byte: whole, in parts, in parts the last one full', async () => {
    // 12 papers of a few references each (self-citations and W999 left out): 32, so the parts of
    // 8 bytes end full and those of 12 and 20 do not.
    const runs = await streamedAndInMemory(CITING, [256 * 1024 * 1024, 8, 12, 20]);
    for (const { streamed, inMemory, pairs } of runs) {
      expect(pairs).toBe(32);
      expect(streamed.map(([row]) => row)).toEqual(inMemory.map(([row]) => row));
      for (const [i, [row, bytes]] of streamed.entries())
        expect(bytes.equals(inMemory[i]![1]), row).toBe(true);
    }
    expect(runs[0]!.streamed.map(([row]) => row)).toEqual(['refs_start', 'refs_checkpoints', 'refs_packed']);
    // Ordinals below 128: a byte each.
    expect(runs[1]!.streamed.filter(([row]) => row.startsWith('refs_packed#')).length).toBe(4);
  });

  it('are an empty refs_packed row when no paper cites another', async () => {
    const [run] = await streamedAndInMemory([work(1, { referenced_works: cites(1, 999) }), work(2)], [8]);
    const { streamed, inMemory } = run!;
    expect(streamed.map(([row, bytes]) => [row, bytes.length])).toEqual([
      ['refs_start#0', 8],
      ['refs_start#1', 4],
      ['refs_checkpoints', 8],
      ['refs_packed', 0],
    ]);
    expect(streamed).toEqual(inMemory);
  });
});

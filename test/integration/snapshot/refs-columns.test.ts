import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { loadCorpusReporting, REF_PAIRS_SQL } from '../../../src/scoring/corpus.js';
import { DEFAULT_PARAMETERS } from '../../../src/scoring/parameters.js';
import { paperColumnRows } from '../../../src/snapshot/column-parts.js';
import { REFS_BLOCK } from '../../../src/snapshot/paper-refs.js';
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
 * The rows the build writes for the references (refs_start in paper_columns, the values in the
 * blocks of paper_refs), staged from the store and read back, and those the CSR in memory gives
 * (each paper's cited ordinals sorted): the same bytes.
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
    const values = Int32Array.from(lists.flatMap((l) => l.sort((a, b) => a - b)));
    const staged = await stageRefs(store, n, join(dir, 'refs'));
    const out = [];
    for (const part of partBytes) {
      const streamed: [string, Buffer][] = [];
      const blocks: [number, Buffer][] = [];
      // Each copied: the writer hands them over in one buffer, in turn.
      writeRefsColumns(
        staged,
        (row, bytes) => streamed.push([row, Buffer.from(bytes)]),
        (block, bytes) => blocks.push([block, Buffer.from(bytes)]),
        part,
      );
      const inMemory = paperColumnRows('refs_start', Buffer.from(start.buffer), part);
      const inMemoryBlocks: [number, Buffer][] = [];
      for (let at = 0, b = 0; at < values.length; at += REFS_BLOCK, b++)
        inMemoryBlocks.push([b, Buffer.from(values.slice(at, at + REFS_BLOCK).buffer)]);
      out.push({ streamed, inMemory, blocks, inMemoryBlocks, pairs: from.length });
    }
    return out;
  } finally {
    store.close();
  }
}

describe('the references columns staged from the store', () => {
  it('are the CSR in memory byte for byte: refs_start whole or in parts, the values in blocks', async () => {
    // 12 papers of a few references each (self-citations and W999 left out): 32, so the parts of
    // 52 bytes (13 papers' starts) are whole, and those of 8 and 12 are not, the last one full.
    const runs = await streamedAndInMemory(CITING, [256 * 1024 * 1024, 8, 12]);
    for (const { streamed, inMemory, blocks, inMemoryBlocks, pairs } of runs) {
      expect(pairs).toBe(32);
      expect(streamed.map(([row]) => row)).toEqual(inMemory.map(([row]) => row));
      for (const [i, [row, bytes]] of streamed.entries())
        expect(bytes.equals(inMemory[i]![1]), row).toBe(true);
      expect(blocks).toEqual(inMemoryBlocks);
      expect(blocks.map(([b, bytes]) => [b, bytes.length])).toEqual([[0, 32 * 4]]);
    }
    expect(runs[0]!.streamed.map(([row]) => row)).toEqual(['refs_start']);
    expect(runs[1]!.streamed.filter(([row]) => row.startsWith('refs_start#')).length).toBe(7);
  });

  it('are no block at all when no paper cites another', async () => {
    const [run] = await streamedAndInMemory([work(1, { referenced_works: cites(1, 999) }), work(2)], [8]);
    const { streamed, inMemory, blocks } = run!;
    expect(streamed.map(([row, bytes]) => [row, bytes.length])).toEqual([
      ['refs_start#0', 8],
      ['refs_start#1', 4],
    ]);
    expect(streamed).toEqual(inMemory);
    expect(blocks).toEqual([]);
  });
});

describe('the blocks of paper_refs', () => {
  it('are the staged values REFS_BLOCK at a time, read a few blocks at a time', () => {
    const dir = tempDir('ri-refs-blocks-');
    // Three and a half blocks of values for two papers; read two blocks at a time, then three.
    const values = Int32Array.from({ length: REFS_BLOCK * 3.5 }, (_, i) => (i * 7919) % 100_003);
    const file = join(dir, 'staged');
    writeFileSync(file, Buffer.from(values.buffer));
    const start = Int32Array.from([0, 1000, values.length]);
    for (const readBlocks of [2, 3]) {
      const blocks: [number, Buffer][] = [];
      writeRefsColumns(
        { start, file },
        () => {},
        (b, bytes) => blocks.push([b, Buffer.from(bytes)]),
        undefined,
        readBlocks * REFS_BLOCK * 4,
      );
      expect(blocks.map(([b, bytes]) => [b, bytes.length / 4])).toEqual([
        [0, REFS_BLOCK],
        [1, REFS_BLOCK],
        [2, REFS_BLOCK],
        [3, REFS_BLOCK / 2],
      ]);
      const joined = new Int32Array(new Uint8Array(Buffer.concat(blocks.map(([, bytes]) => bytes))).buffer);
      expect(joined).toEqual(values);
    }
    expect(() => writeRefsColumns({ start, file }, () => {}, () => {}, undefined, 100)).toThrow(/no whole block/);
  });
});

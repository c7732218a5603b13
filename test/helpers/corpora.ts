import type { Csr } from '../../src/scoring/corpus.js';

/** A seeded generator (mulberry32), so a failure on a random corpus can be run again. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A CSR of each paper's values, the lists given in paper order. */
export function csrOf(lists: number[][]): Csr {
  const start = new Int32Array(lists.length + 1);
  lists.forEach((l, p) => {
    start[p + 1] = start[p]! + l.length;
  });
  return { start, values: Int32Array.from(lists.flat()) };
}

import type { Corpus } from './corpus.js';

/**
 * Every paper's ordinal in DOI order (papers without a DOI last, ties by ordinal): the order the
 * load's DOI ranks give (dense ranks from the store's byte order of the text), by a counting sort.
 * The ranking rule breaks its ties by it, and the snapshot keeps it so a DOI is found by halving.
 */
export function doiOrder(corpus: Pick<Corpus, 'n' | 'doiRank'>): Int32Array {
  const { n, doiRank } = corpus;
  let ranks = 0;
  for (let p = 0; p < n; p++) ranks = Math.max(ranks, doiRank[p]! + 1);
  const start = new Int32Array(ranks + 1);
  for (let p = 0; p < n; p++) start[doiRank[p]! + 1]!++;
  for (let r = 0; r < ranks; r++) start[r + 1]! += start[r]!;
  const order = new Int32Array(n);
  for (let p = 0; p < n; p++) order[start[doiRank[p]!]!++] = p;
  return order;
}

/**
 * FTS5's bm25 as sqlite's fts5_aux.c computes it (k1 1.2, b 0.75, idf 1e-6 when not above 0), for
 * the rankings research makes outside FTS5 from stored statistics: over the titles
 * (core/research/title-ranking.ts) and over the topics' texts (topic-search.ts). The same
 * arithmetic in the same order, so the same number to the bit.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * A term's idf among `rows` rows of which `hits` hold it. `ln` is the logarithm FTS5 uses (SQLite's
 * own, title-terms.ts): JavaScript's may differ in the last bit.
 */
export function bm25Idf(ln: (x: number) => number, rows: number, hits: number): number {
  const idf = ln((rows - hits + 0.5) / (hits + 0.5));
  return idf <= 0 ? 1e-6 : idf;
}

/** One phrase's part of a row's bm25: its term held `f` times in a row of `tokens` tokens. */
export function bm25TermScore(idf: number, f: number, tokens: number, avgdl: number): number {
  return idf * ((f * (BM25_K1 + 1.0)) / (f + BM25_K1 * (1 - BM25_B + (BM25_B * tokens) / avgdl)));
}

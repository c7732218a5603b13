/**
 * The size of an answer as a model's context counts it: in tokens, which only the model's own
 * tokenizer knows (bench/mcp-tokens.mjs counts o200k's, with gpt-tokenizer). The server estimates
 * them from the text the way such tokenizers cut it first: into pieces (a word, up to three digits,
 * a run of punctuation, white space) that no token spans. A digit piece is one token and white
 * space one; a word is counted at four letters a token and punctuation at a token a character,
 * which is more than they cost in English and in the histories' tables. On every history result
 * of the bundled sample the estimate is at least the o200k count, within a few percent of it for a
 * long one; English prose it overcounts by up to half.
 */

/** The most a tool result's text may hold, in estimated tokens (9,000: under 10,000 in o200k with room). */
export const RESULT_TOKENS = 9_000;

/** The pieces GPT-4o's tokenizer (o200k) cuts text into before it merges bytes into tokens. */
const PIECES =
  /[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;
const LETTER = /\p{L}/u;
const DIGIT = /^\p{N}/u;

/**
 * The tokens a text costs a model, estimated (see above). Never more than its length: each piece
 * is counted at most one token a character, so a text no longer than a budget fits it.
 */
export function estimateTokens(text: string): number {
  let tokens = 0;
  for (const [piece] of text.matchAll(PIECES)) {
    if (DIGIT.test(piece)) tokens += 1;
    else if (LETTER.test(piece)) tokens += Math.ceil(piece.length / 4);
    else {
      const visible = piece.replace(/\s/g, '').length;
      tokens += visible === 0 ? 1 : visible;
    }
  }
  return tokens;
}

/** Whether a result's text is within `budget` estimated tokens (a text no longer than it is, uncounted). */
export function withinBudget(text: string, budget = RESULT_TOKENS): boolean {
  return text.length <= budget || estimateTokens(text) <= budget;
}

/**
 * The most parts (from `lo` to `hi`) an answer can keep within its size, `fits(n)` telling whether
 * n parts fit (fewer always fit when more do): `lo` when none of the others fits. A binary search,
 * so that a long answer is written out a few times, not once per part.
 */
export function mostThatFit(lo: number, hi: number, fits: (kept: number) => boolean): number {
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The lab filter language as data. Positions are 0-based UTF-16 offsets into the input (JavaScript
 * string indices), so a front door can point at the exact character. Texts are kept as written;
 * `canonicalTermText` in query-parser.ts gives the form a resolver should compare.
 */

/** One searchable term. */
export type Term =
  /** A bare word: an element symbol or name, or a one-word topic name. `text` as written. */
  | { kind: 'word'; text: string; pos: number }
  /** A quoted exact topic name. `text` is what stood between the quotes, as written. */
  | { kind: 'phrase'; text: string; pos: number }
  /** `prefix*`: topic names starting with `prefix` (as written, without the `*`). */
  | { kind: 'wildcard'; prefix: string; pos: number };

export type Clause =
  /** `term` or `+term`: every match is mapped to the term. */
  | { kind: 'require'; term: Term; pos: number }
  /** `-term`: no match is mapped to the term. */
  | { kind: 'exclude'; term: Term; pos: number }
  /** `(a OR b ...)`: every match is mapped to at least one of the terms (always two or more). */
  | { kind: 'any'; terms: Term[]; pos: number }
  /** `year:A..B`, `year:A..`, `year:..B`, `year:A` (from === to). Bounds inclusive; null = open. */
  | { kind: 'year'; from: number | null; to: number | null; pos: number };

/**
 * A parsed query. Clauses are in input order, duplicates removed, at least one `require` or `any`
 * clause and at most one `year` clause.
 */
export interface LabQuery {
  clauses: Clause[];
}

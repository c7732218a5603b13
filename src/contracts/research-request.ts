/**
 * What a research request may ask for: its reading lists and its pages. Plain values (no zod), so
 * the core reads them without loading the schemas (research.ts builds the parameters on them).
 */

/** The reading lists an answer can hold, in their order. */
export type Lens = 'foundational' | 'now' | 'newest';
export const LENSES: readonly Lens[] = ['foundational', 'now', 'newest'];

/** Pages a question's answer has at most. */
export const MAX_PAGES = 5;

/** Papers per lens on a page at most, and by default. */
export const MAX_PAGE_SIZE = 10;

/** The reading lists a research answer can hold, in the order they are listed. */
export type Lens = 'foundational' | 'now' | 'newest';
export const LENSES: readonly Lens[] = ['foundational', 'now', 'newest'];

/** A research question as the core takes it: a question or a paper, the lists and the page. */
export interface ResearchRequest {
  q?: string;
  paper?: string;
  pageSize: number;
  lenses: Lens[];
  page: number;
}

import type { Lens } from '../../contracts/research-request.js';
import { requireExactlyOne } from '../exactly-one.js';

export { LENSES, type Lens } from '../../contracts/research-request.js';

/** A research question as the core takes it: a question or a paper, the lists and the page. */
export interface ResearchRequest {
  q?: string;
  paper?: string;
  pageSize: number;
  lenses: Lens[];
  page: number;
}

/** The request from the parameters as both doors parse them (contracts/research.ts): a question or a paper, never both. */
export function researchRequest(f: {
  q?: string | undefined;
  paper?: string | undefined;
  page_size: number;
  lenses: Lens[];
  page: number;
}): ResearchRequest {
  requireExactlyOne({ q: f.q, paper: f.paper }, "'q' (a question) or 'paper' (a DOI or title)");
  return {
    ...(f.q !== undefined ? { q: f.q } : { paper: f.paper! }),
    pageSize: f.page_size,
    lenses: f.lenses,
    page: f.page,
  };
}

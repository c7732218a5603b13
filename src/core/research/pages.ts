import { MAX_PAGES } from '../../contracts/research-request.js';
import { ServiceError } from '../errors.js';
import type { ResearchRequest } from './request.js';

/**
 * Research pages: how many an answer has, and how a page is sold. A page past the last would be a
 * paid answer with empty lists, so it is refused (404 page_out_of_range) before any payment is
 * asked, like every error; research is costly, so the count is learnt without slowing page 1.
 */

/** The pages of an answer whose longest list holds `longest` papers: at least 1, at most MAX_PAGES. */
export function pageCount(longest: number, pageSize: number): number {
  return Math.min(MAX_PAGES, Math.max(1, Math.ceil(longest / pageSize)));
}

/** The refusal of a page past the last, saying how many pages the answer has. */
export function pastTheLastPage(request: Pick<ResearchRequest, 'page' | 'pageSize'>, pages: number) {
  return new ServiceError(
    'page_out_of_range',
    `This answer has ${pages} page${pages === 1 ? '' : 's'} at page_size ${request.pageSize}; page ${request.page} is past the last. Nothing was charged.`,
    { parameter: 'page', page: request.page, pages },
  );
}

/** Page counts learnt per snapshot, at most this many questions (the oldest dropped first). */
const KEPT = 4_096;

/** What a page count depends on: the question and how it is paged (not the page, nor the caller). */
function keyOf(r: ResearchRequest): string {
  return JSON.stringify([r.q ?? null, r.paper ?? null, r.pageSize, r.lenses]);
}

/**
 * One research page, paid for: a page past the last is refused before `charge`. The count comes
 * from an earlier answer to the same question on this snapshot (a client reaches page 2 through
 * page 1's `next`), so then the page is charged before it is computed, as page 1 always is. A
 * page after the first whose count is not known yet is computed first (the core refuses it when
 * past the last), then charged: only such pages pay the computation before the payment.
 */
export async function researchPage<T extends { pages: number }>(
  memo: { memoize<M>(key: string, compute: () => M): M },
  request: ResearchRequest,
  charge: () => Promise<void>,
  compute: () => Promise<T>,
): Promise<T> {
  const counts = memo.memoize('research-page-counts', () => new Map<string, number>());
  const key = keyOf(request);
  const learn = (pages: number) => {
    counts.delete(key);
    if (counts.size >= KEPT) counts.delete(counts.keys().next().value!);
    counts.set(key, pages);
  };
  const run = async () => {
    try {
      const answer = await compute();
      learn(answer.pages);
      return answer;
    } catch (e) {
      if (e instanceof ServiceError && e.code === 'page_out_of_range') learn(e.extra.pages as number);
      throw e;
    }
  };
  const known = counts.get(key);
  if (known !== undefined && request.page > known) throw pastTheLastPage(request, known);
  const early = known === undefined && request.page > 1 ? await run() : undefined;
  await charge();
  return early ?? (await run());
}

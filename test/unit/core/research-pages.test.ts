import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/core/errors.js';
import { pageCount, pastTheLastPage, researchPage } from '../../../src/core/research/pages.js';
import type { ResearchRequest } from '../../../src/core/research.js';

/** A snapshot's memo, as the core's memoize gives it. */
function memo() {
  const kept = new Map<string, unknown>();
  return {
    memoize<T>(key: string, compute: () => T): T {
      if (!kept.has(key)) kept.set(key, compute());
      return kept.get(key) as T;
    },
  };
}

const ask = (page: number, q = 'hafnium'): ResearchRequest => ({ q, pageSize: 10, lenses: ['now'], page });

/** A question whose answer has `pages` pages; records the order of charge and compute. */
function service(pages: number) {
  const steps: string[] = [];
  return {
    steps,
    charge: async () => {
      steps.push('charge');
    },
    compute: (request: ResearchRequest) => async () => {
      steps.push('compute');
      if (request.page > pages) throw pastTheLastPage(request, pages);
      return { pages, page: request.page };
    },
  };
}

describe('research pages', () => {
  it('counts the pages of the longest list, 1 to 5', () => {
    expect([
      pageCount(0, 10),
      pageCount(1, 10),
      pageCount(10, 10),
      pageCount(11, 10),
      pageCount(999, 1),
    ]).toEqual([1, 1, 1, 2, 5]);
  });

  it('page 1 is charged before it is computed, and teaches the count', async () => {
    const m = memo();
    const s = service(2);
    await researchPage(m, ask(1), s.charge, s.compute(ask(1)));
    expect(s.steps).toEqual(['charge', 'compute']);
    // Known now: a page past the last is refused with neither charge nor computation.
    s.steps.length = 0;
    const past = researchPage(m, ask(3), s.charge, s.compute(ask(3)));
    await expect(past).rejects.toMatchObject({ code: 'page_out_of_range', extra: { pages: 2 } });
    expect(s.steps).toEqual([]);
    // A page within the count is charged before it is computed, as page 1.
    await researchPage(m, ask(2), s.charge, s.compute(ask(2)));
    expect(s.steps).toEqual(['charge', 'compute']);
  });

  it('a later page of a question not counted yet is computed first: past the last, never charged', async () => {
    const m = memo();
    const s = service(2);
    await expect(researchPage(m, ask(4), s.charge, s.compute(ask(4)))).rejects.toBeInstanceOf(ServiceError);
    expect(s.steps).toEqual(['compute']);
    // The refusal taught the count: the next asking is refused without computing.
    s.steps.length = 0;
    await expect(researchPage(m, ask(5), s.charge, s.compute(ask(5)))).rejects.toMatchObject({
      code: 'page_out_of_range',
    });
    expect(s.steps).toEqual([]);
    // Within the count, not known before: computed, then charged, and the answer computed once.
    const t = service(3);
    const answer = await researchPage(memo(), ask(2, 'other'), t.charge, t.compute(ask(2, 'other')));
    expect(answer).toEqual({ pages: 3, page: 2 });
    expect(t.steps).toEqual(['compute', 'charge']);
  });

  it('a charge refused after the computation (no payment yet) still teaches the count', async () => {
    const m = memo();
    const s = service(2);
    const refuse = async () => {
      s.steps.push('charge');
      throw new Error('402');
    };
    await expect(researchPage(m, ask(2), refuse, s.compute(ask(2)))).rejects.toThrow('402');
    s.steps.length = 0;
    // The paid retry: charged before it is computed.
    await researchPage(m, ask(2), s.charge, s.compute(ask(2)));
    expect(s.steps).toEqual(['charge', 'compute']);
  });
});

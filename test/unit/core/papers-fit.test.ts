import { describe, expect, it } from 'vitest';
import type { PaperEntry } from '../../../src/contracts/common.js';
import type { ElementPapersAnswer } from '../../../src/contracts/elements.js';
import { estimateTokens, mostThatFit } from '../../../src/core/answer-size.js';
import { answerText } from '../../../src/core/answer-text.js';
import { fitPapers } from '../../../src/core/papers.js';

/** Papers with titles of varied length, as a real list has. */
const papers = (n: number): PaperEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    title: `Study ${i} of ${'nickel iron oxygen evolution '.repeat(1 + (i % 4))}electrocatalysts`,
    doi: `10.1000/test.${i}`,
    openalex_id: `W${1000 + i}`,
    venue: 'Journal of Tests',
    year: 2020 + (i % 5),
    citations: (i * 37) % 500,
    link: `https://doi.org/10.1000/test.${i}`,
    impact_score: 99 - i / 2,
    citation_percentile: 98 - i / 2,
    cluster: 'T10030',
    cluster_name: 'Electrocatalysts for Energy Conversion',
    rank: i + 1,
    ris_contribution: 0.0001 * (i + 1),
    publication_date: `${2020 + (i % 5)}-0${1 + (i % 9)}-15`,
    elements: ['Fe', 'Ni', 'O'],
    keywords: ['catalysis', 'oxygen-evolution'],
  }));

function listAnswer(list: PaperEntry[]): ElementPapersAnswer {
  return {
    symbol: 'Fe',
    keyword: null,
    sort: 'impact',
    limit: 100,
    total_ranked: 100,
    papers: list,
    canonical_url: 'https://ri.example/elements/Fe',
    notes: { read: 'research-intensity://notes/0123456789abcdef' } as unknown as ElementPapersAnswer['notes'],
    data_version: '0123456789abcdef',
  };
}

const WHOLE = 'https://ri.example/v1/elements/Fe/papers?limit=100 (add &format=csv for CSV)';
const tokens = (a: object) => estimateTokens(answerText(a));

describe('a paper result held to its size', () => {
  it('is unchanged when it fits', () => {
    const answer = listAnswer(papers(20));
    expect(fitPapers(answer, WHOLE, 9_000)).toBe(answer);
  });

  it('keeps the first papers, as many as fit, and says which are left out and where the whole answer is', () => {
    const all = papers(100);
    const budget = 4_000;
    const fitted = fitPapers(listAnswer(all), WHOLE, budget);
    const kept = fitted.papers.length;
    expect(kept).toBeGreaterThan(10);
    expect(kept).toBeLessThan(100);
    expect(fitted.papers).toEqual(all.slice(0, kept));
    expect(tokens(fitted)).toBeLessThanOrEqual(budget);
    // One paper more (with the same note) would not fit.
    expect(tokens({ ...fitted, papers: all.slice(0, kept + 1) })).toBeGreaterThan(budget);
    // The answer's other fields as they were: limit and total_ranked still say what was asked.
    expect({ ...fitted, papers: null, notes: null }).toEqual({
      ...listAnswer(all),
      papers: null,
      notes: null,
    });
    expect(fitted.notes).toEqual({
      read: 'research-intensity://notes/0123456789abcdef',
      left_out:
        `Papers ${kept + 1} to 100 of the list (${100 - kept} of 100) are left out: a result holds about 4,000 tokens ` +
        'and keeps the first papers that fit. A paper list has no pages: no call of this tool gets only those. ' +
        `The whole answer: ${WHOLE}.`,
    });
  });

  it('keeps one paper at least', () => {
    expect(fitPapers(listAnswer(papers(3)), WHOLE, 10).papers).toHaveLength(1);
  });
});

describe('the most parts that fit', () => {
  it('is the largest n from lo to hi that fits, lo when none above it does', () => {
    for (const limit of [0, 1, 5, 37, 99, 100, 500])
      expect([limit, mostThatFit(1, 100, (n) => n <= limit)]).toEqual([
        limit,
        Math.min(100, Math.max(1, limit)),
      ]);
  });
});

import { describe, expect, it } from 'vitest';
import { checkQuote, depthOffers } from '../../../src/core/lab.js';
import { signQuote } from '../../../src/lab/quote-signature.js';

const settings = {
  secret: 'test-secret-0123456789',
  ttlSeconds: 900,
  now: () => new Date('2026-11-23T12:00:00Z'),
};
const usd = (v: number) => ({ usd: v, currency: 'USD' });

describe('the depths a quote offers', () => {
  it.each([
    [0, [], ['papers_20', 'papers_100']],
    [1, ['papers_20'], ['papers_100']],
    [20, ['papers_20'], ['papers_100']],
    [21, ['papers_20', 'papers_100'], []],
    [100_000, ['papers_20', 'papers_100'], []],
    [100_001, [], ['papers_20', 'papers_100']],
  ])('%i matches: offers %j, not %j', (matches, offered, notOffered) => {
    const o = depthOffers(matches);
    expect(o.offered.map((d) => d.depth)).toEqual(offered);
    expect(o.notOffered.map((d) => d.depth)).toEqual(notOffered);
    // Each offered depth delivers more papers than the one before it.
    const papers = o.offered.map((d) => d.papers);
    expect(papers).toEqual([...new Set(papers)].sort((a, b) => a - b));
  });

  it('a signed quote issued before the rule does not sell papers_100 for the papers of papers_20', () => {
    const old = {
      quote_id: 'q_old',
      matches: 9,
      deliverables: {
        papers_20: { papers: 9, price: usd(0.05), run_price: usd(0.04) },
        papers_100: { papers: 9, price: usd(0.2), run_price: usd(0.19) },
      },
      licence: null,
      data_version: 'v1',
      expires_at: '2026-11-23T12:10:00.000Z',
    };
    const quote = { ...old, signature: signQuote(old, settings.secret) };
    const stamp = { version: 'v1', meta: {} };
    expect(() => checkQuote(stamp, quote, 'papers_100', settings)).toThrow(
      expect.objectContaining({
        code: 'depth_not_offered',
        extra: expect.objectContaining({ offered: ['papers_20'] }),
      }),
    );
    expect(checkQuote(stamp, quote, 'papers_20', settings).quote_id).toBe('q_old');
  });
});

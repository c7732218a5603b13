import { describe, expect, it } from 'vitest';
import { termGroups } from '../../../src/core/research/question.js';
import { questionTopics } from '../../../src/core/research/topic-model.js';
import type { TopicLengths, TopicTerm } from '../../../src/snapshot/reader.js';

/**
 * The topic model's rule, on counts made by hand (what the build stores: per term, the titles of
 * each community holding it; per community, its titles and its terms' weight): a community whose
 * titles use the question's words more than the corpus's titles do comes first, for its size.
 */

const BIG = 1;
const SMALL = 2;
const OTHER = 3;

/** 1,000 titles of BIG (6,000 words), 200 of SMALL (1,200), 200 of OTHER (1,200). */
const LENGTHS: TopicLengths = {
  titles: new Map([
    [BIG, 1000],
    [SMALL, 200],
    [OTHER, 200],
  ]),
  weight: new Map([
    [BIG, 6000],
    [SMALL, 1200],
    [OTHER, 1200],
  ]),
  total: 8400,
};

const term = (pairs: [number, number][]): TopicTerm => ({
  weight: pairs.reduce((s, [, w]) => s + w, 0),
  topics: Int32Array.from(pairs.flat()),
});

/**
 * 'formation' is common everywhere; 'aerosol' and 'nucleation' are SMALL's words, though BIG's
 * titles hold them too.
 */
const TERMS = new Map<string, TopicTerm>([
  [
    'format',
    term([
      [BIG, 300],
      [SMALL, 100],
      [OTHER, 40],
    ]),
  ],
  [
    'aerosol',
    term([
      [SMALL, 40],
      [BIG, 8],
    ]),
  ],
  [
    'nucleat',
    term([
      [SMALL, 20],
      [BIG, 4],
    ]),
  ],
  ['glacier', term([[OTHER, 60]])],
  // Kept: its three heaviest communities of more (its weight is more than theirs).
  ['model', { weight: 400, topics: Int32Array.from([BIG, 200, OTHER, 100, SMALL, 50]) }],
]);

const reader = (lengths: TopicLengths | null = LENGTHS) => ({
  // The titles' index stems words; here a plain table of the words used.
  titleTerm: (w: string) =>
    (({ formation: 'format', nucleation: 'nucleat' }) as Record<string, string>)[w] ?? w,
  topicTerms: (terms: readonly string[]) =>
    new Map(terms.filter((t) => TERMS.has(t)).map((t) => [t, TERMS.get(t)!])),
  topicLengths: () => lengths,
});

const ranked = (shares: Map<number, number>) => [...shares].sort((a, b) => b[1] - a[1]).map(([t]) => t);

describe('the titles topic model', () => {
  it('puts first the community whose titles use the question words most for its size, not the biggest', () => {
    const shares = questionTopics(reader(), termGroups('aerosol nucleation formation'));
    // BIG holds more titles with these words, but they are a small part of its 1,000 titles.
    expect(ranked(shares)[0]).toBe(SMALL);
    const sum = [...shares.values()].reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(1, 9);
  });

  it('counts a community missing from a whole term list as holding none of it', () => {
    // BIG's titles hold 'formation' more often than OTHER's, but none holds 'glacier'.
    expect(ranked(questionTopics(reader(), termGroups('glacier formation')))[0]).toBe(OTHER);
  });

  it('counts a community missing from a cut term list as holding it at most as the last kept', () => {
    // 'model' names three communities and is held 50 times more: a fourth holds it at most 50 times.
    const withFourth: TopicLengths = {
      titles: new Map([...LENGTHS.titles, [4, 200]]),
      weight: new Map([...LENGTHS.weight, [4, 1200]]),
      total: LENGTHS.total + 1200,
    };
    const shares = questionTopics(reader(withFourth), termGroups('aerosol model'));
    expect(shares.has(4)).toBe(false);
    const cut = questionTopics(reader(), termGroups('model glacier'));
    expect(ranked(cut)[0]).toBe(OTHER);
  });

  it('names nothing when the snapshot holds no model (before schema 7) or no word of the question', () => {
    expect(questionTopics(reader(null), termGroups('aerosol formation')).size).toBe(0);
    expect(questionTopics(reader(), termGroups('zzqxv')).size).toBe(0);
  });
});

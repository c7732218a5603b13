import { describe, expect, it } from 'vitest';
import { scoreCommunities } from '../../../src/scoring/communities.js';
import { type Corpus, NO_DAY } from '../../../src/scoring/corpus.js';
import { dayNumber, monthsBefore } from '../../../src/scoring/dates.js';
import { fractionalWeight, isRising, researchIntensity } from '../../../src/scoring/formulas.js';
import { round } from '../../../src/scoring/impact.js';
import { DEFAULT_PARAMETERS } from '../../../src/scoring/parameters.js';
import { csrOf, random } from '../../helpers/corpora.js';

/** `n` papers over twelve years to the cut-off, some undated, with a few of `topicCount` topics and elements. */
function corpusOf(n: number, topicCount: number, rnd: () => number): Corpus {
  const cutoffDay = dayNumber('2026-06-30');
  const ageDay = Int32Array.from({ length: n }, () =>
    rnd() < 0.05 ? NO_DAY : cutoffDay - Math.floor(rnd() * 12 * 365),
  );
  const distinct = (count: number, of: number) => [
    ...new Set(Array.from({ length: count }, () => Math.floor(rnd() * of))),
  ];
  return {
    n,
    ageDay,
    cutoffDay,
    topicIds: Array.from({ length: topicCount }, (_, i) => 10_000 + 7 * i),
    topics: csrOf(
      Array.from({ length: n }, () => distinct(Math.floor(rnd() * 4), topicCount).sort((a, b) => a - b)),
    ),
    // A few elements, the last of the table among them (an off-by-one in the keys shows there).
    elements: csrOf(
      Array.from({ length: n }, () =>
        distinct(Math.floor(rnd() * 3), 6)
          .map((e) => (e === 5 ? 117 : e))
          .sort((a, b) => a - b),
      ),
    ),
  } as unknown as Corpus;
}

/** Each paper's topics and elements as plain arrays, made once per corpus for the oracle's 280 passes. */
const listsOf = new WeakMap<Corpus, { topics: number[][]; elements: number[][] }>();
function lists(corpus: Corpus): { topics: number[][]; elements: number[][] } {
  let made = listsOf.get(corpus);
  if (made === undefined) {
    const of = (csr: Corpus['topics']) =>
      Array.from({ length: corpus.n }, (_, p) =>
        Array.from(csr.values.subarray(csr.start[p]!, csr.start[p + 1]!)),
      );
    made = { topics: of(corpus.topics), elements: of(corpus.elements) };
    listsOf.set(corpus, made);
  }
  return made;
}

/** The rule, one community at a time: its papers in ordinal order. */
function oracle(corpus: Corpus, topic: number, element: number | null) {
  const params = DEFAULT_PARAMETERS;
  const recentStart = monthsBefore(corpus.cutoffDay, params.risingRecentYears * 12);
  const beforeStart = monthsBefore(recentStart, params.risingBeforeYears * 12);
  const inRecent = (d: number) => d !== NO_DAY && d > recentStart && d <= corpus.cutoffDay;
  const inBefore = (d: number) => d !== NO_DAY && d > beforeStart && d <= recentStart;
  let papers = 0;
  let recentPapers = 0;
  let recent = 0;
  let before = 0;
  let recentTotal = 0;
  let beforeTotal = 0;
  for (let p = 0; p < corpus.n; p++) {
    const d = corpus.ageDay[p]!;
    if (inRecent(d)) recentTotal++;
    if (inBefore(d)) beforeTotal++;
    const topics = lists(corpus).topics[p]!;
    const elements = lists(corpus).elements[p]!;
    if (!topics.includes(topic) || (element !== null && !elements.includes(element))) continue;
    const weight = element === null ? fractionalWeight(topics.length) : 1;
    papers++;
    if (inRecent(d)) {
      recentPapers++;
      recent += weight;
    } else if (inBefore(d)) before += weight;
  }
  const riRecent = researchIntensity(recent, recentTotal);
  const riBefore = researchIntensity(before, beforeTotal);
  return {
    topicId: corpus.topicIds[topic]!,
    paperCount: papers,
    recentPapers,
    riRecent: round(riRecent, 4),
    riBefore: round(riBefore, 4),
    rising: isRising(riRecent, riBefore, recentPapers, params.risingMargin, params.risingMinPapers),
  };
}

describe('scoreCommunities', () => {
  it.each([1, 2, 3])('gives every community and sub-community the rule does (seed %i)', (seed) => {
    const corpus = corpusOf(3000, 40, random(seed));
    const { communities, elementCommunities } = scoreCommunities(corpus, DEFAULT_PARAMETERS);

    const expected = [];
    for (let t = 0; t < 40; t++) {
      const c = oracle(corpus, t, null);
      if (c.paperCount > 0) expected.push(c);
    }
    expect(communities).toEqual(expected);

    const expectedPairs = [];
    for (const element of [0, 1, 2, 3, 4, 117])
      for (let t = 0; t < 40; t++) {
        const c = oracle(corpus, t, element);
        if (c.paperCount >= DEFAULT_PARAMETERS.minSubCommunityPapers) expectedPairs.push({ element, ...c });
      }
    expect(elementCommunities).toEqual(expectedPairs);
    // The data is rich enough to tell: communities of both kinds, some rising, some not.
    expect(elementCommunities.some((c) => c.element === 117)).toBe(true);
    expect(new Set(communities.map((c) => c.rising)).size).toBe(2);
  });
});

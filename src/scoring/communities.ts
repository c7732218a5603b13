import { ELEMENTS } from '../elements/elements.js';
import { type Corpus, NO_DAY } from './corpus.js';
import { monthsBefore } from './dates.js';
import { fractionalWeight, isRising, researchIntensity } from './formulas.js';
import { round } from './impact.js';
import type { ScoringParameters } from './parameters.js';

/**
 * Research communities (topics, described by the taxonomy) and element sub-communities (the
 * papers of one topic that carry one element), with the rising flag (docs/metrics.md).
 */
export interface Community {
  topicId: number;
  paperCount: number;
  recentPapers: number;
  riRecent: number;
  riBefore: number;
  rising: boolean;
}

export interface ElementCommunity extends Community {
  element: number;
}

export function scoreCommunities(corpus: Corpus, params: ScoringParameters) {
  const cutoff = corpus.cutoffDay;
  const recentStart = monthsBefore(cutoff, params.risingRecentYears * 12);
  const beforeStart = monthsBefore(recentStart, params.risingBeforeYears * 12);
  const topicCount = corpus.topicIds.length;
  // Sums by topic, then by (element, topic) at element * topicCount + topic, in typed arrays: a
  // Map entry per key and a lookup per paper, topic and element took a second at 1M works. Each
  // key's sums still take its papers in ordinal order, so they are the same doubles.
  const topics = new Sums(topicCount);
  const pairs = new Sums(ELEMENTS.length * topicCount);
  let recentTotal = 0;
  let beforeTotal = 0;
  const { start: topicStart, values: topicValues } = corpus.topics;
  const { start: elementStart, values: elementValues } = corpus.elements;
  for (let p = 0; p < corpus.n; p++) {
    const d = corpus.ageDay[p]!;
    const phase: Phase =
      d === NO_DAY ? 0 : d > recentStart && d <= cutoff ? 1 : d > beforeStart && d <= recentStart ? 2 : 0;
    if (phase === 1) recentTotal++;
    else if (phase === 2) beforeTotal++;
    const ts = topicStart[p]!;
    const te = topicStart[p + 1]!;
    const tw = fractionalWeight(te - ts);
    const es = elementStart[p]!;
    const ee = elementStart[p + 1]!;
    for (let i = ts; i < te; i++) {
      const topic = topicValues[i]!;
      topics.add(topic, tw, phase);
      // Sub-communities count whole papers: a paper is in (element, topic) or it is not.
      for (let j = es; j < ee; j++) pairs.add(elementValues[j]! * topicCount + topic, 1, phase);
    }
  }

  const finish = (topicIndex: number, sums: Sums, key: number): Community => {
    const riRecent = researchIntensity(sums.recent[key]!, recentTotal);
    const riBefore = researchIntensity(sums.before[key]!, beforeTotal);
    const recentPapers = sums.recentPapers[key]!;
    return {
      topicId: corpus.topicIds[topicIndex]!,
      paperCount: sums.papers[key]!,
      recentPapers,
      riRecent: round(riRecent, 4),
      riBefore: round(riBefore, 4),
      rising: isRising(riRecent, riBefore, recentPapers, params.risingMargin, params.risingMinPapers),
    };
  };
  const communities: Community[] = [];
  for (let t = 0; t < topicCount; t++) if (topics.papers[t]! > 0) communities.push(finish(t, topics, t));
  const elementCommunities: ElementCommunity[] = [];
  for (let key = 0; key < pairs.papers.length; key++) {
    const papers = pairs.papers[key]!;
    if (papers === 0 || papers < params.minSubCommunityPapers) continue;
    const element = Math.floor(key / topicCount);
    elementCommunities.push({ element, ...finish(key % topicCount, pairs, key) });
  }
  return { communities, elementCommunities, recentStart, beforeStart };
}

/** 0: outside both periods (or no date); 1: the recent period; 2: the one before it. */
type Phase = 0 | 1 | 2;

/** Per key: papers, and the papers and weights of the recent period and of the one before. */
class Sums {
  readonly papers: Int32Array;
  readonly recentPapers: Int32Array;
  readonly recent: Float64Array;
  readonly before: Float64Array;

  constructor(keys: number) {
    this.papers = new Int32Array(keys);
    this.recentPapers = new Int32Array(keys);
    this.recent = new Float64Array(keys);
    this.before = new Float64Array(keys);
  }

  add(key: number, weight: number, phase: Phase): void {
    this.papers[key]!++;
    if (phase === 1) {
      this.recent[key]! += weight;
      this.recentPapers[key]!++;
    } else if (phase === 2) this.before[key]! += weight;
  }
}

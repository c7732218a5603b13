import { ELEMENTS } from '../elements/elements.js';
import { getOrCreate } from '../util/maps.js';
import { type Corpus, NO_DAY } from './corpus.js';
import { monthsBefore } from './dates.js';
import { fractionalWeight, isRising, researchIntensity } from './formulas.js';
import { round } from './impact.js';
import type { ScoringParameters } from './parameters.js';

/**
 * Research communities (topics, described by the taxonomy) and element sub-communities (the
 * papers of one topic that carry one element), with the rising flag of DESIGN section 3.
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
  let recentTotal = 0;
  let beforeTotal = 0;
  type Acc = { papers: number; recentPapers: number; recent: number; before: number };
  const topics = new Map<number, Acc>();
  const pairs = new Map<number, Acc>();
  const bump = (map: Map<number, Acc>, key: number, w: number, phase: 0 | 1 | 2) => {
    const a = getOrCreate(map, key, () => ({ papers: 0, recentPapers: 0, recent: 0, before: 0 }));
    a.papers++;
    if (phase === 1) {
      a.recent += w;
      a.recentPapers++;
    } else if (phase === 2) a.before += w;
  };

  for (let p = 0; p < corpus.n; p++) {
    const d = corpus.ageDay[p]!;
    const phase: 0 | 1 | 2 =
      d === NO_DAY ? 0 : d > recentStart && d <= cutoff ? 1 : d > beforeStart && d <= recentStart ? 2 : 0;
    if (phase === 1) recentTotal++;
    else if (phase === 2) beforeTotal++;
    const ts = corpus.topics.start[p]!;
    const te = corpus.topics.start[p + 1]!;
    const tw = fractionalWeight(te - ts);
    const es = corpus.elements.start[p]!;
    const ee = corpus.elements.start[p + 1]!;
    for (let i = ts; i < te; i++) {
      const topic = corpus.topics.values[i]!;
      bump(topics, topic, tw, phase);
      // Sub-communities count whole papers: a paper is in (element, topic) or it is not.
      for (let j = es; j < ee; j++) bump(pairs, corpus.elements.values[j]! * 1_000_000 + topic, 1, phase);
    }
  }

  const finish = (topicIndex: number, a: Acc): Community => {
    const riRecent = researchIntensity(a.recent, recentTotal);
    const riBefore = researchIntensity(a.before, beforeTotal);
    return {
      topicId: corpus.topicIds[topicIndex]!,
      paperCount: a.papers,
      recentPapers: a.recentPapers,
      riRecent: round(riRecent, 4),
      riBefore: round(riBefore, 4),
      rising: isRising(riRecent, riBefore, a.recentPapers, params.risingMargin, params.risingMinPapers),
    };
  };
  const communities = [...topics].map(([t, a]) => finish(t, a));
  const elementCommunities: ElementCommunity[] = [];
  for (const [key, a] of pairs) {
    if (a.papers < params.minSubCommunityPapers) continue;
    const element = Math.floor(key / 1_000_000);
    if (element >= ELEMENTS.length) continue;
    elementCommunities.push({ element, ...finish(key % 1_000_000, a) });
  }
  return { communities, elementCommunities, recentStart, beforeStart };
}

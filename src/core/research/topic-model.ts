import type { ResearchQueries } from '../../snapshot/reader.js';
import type { TermGroup } from './question.js';

/**
 * The question's topic as the corpus's own (title, community) pairs teach it: a naive Bayes over
 * the titles' terms (the build counts, per term, the titles of each community holding it, a
 * community's own texts counting as a few titles: snapshot-build/topic-terms.ts). A community's score is
 * how much more likely its titles are than the corpus's to hold the question's terms (each term's
 * share of the community's words, smoothed toward the corpus's share), plus a prior for its size;
 * the scores become shares of 1 (a softmax, tempered). Only the communities some term names are
 * scored: a handful of lookups by key per question, whatever the corpus's size.
 */

/** Smoothing toward the corpus's share of a term (Dirichlet, in words of a community). */
const MU = 1000;
/** Weight of log(titles + 1), a community's prior for its size. */
const PRIOR = 1.5;
/** The scores' temperature: the shares are softmax(score / TEMPERATURE). */
const TEMPERATURE = 1;

/** What the topic model reads: the titles' stemmer, the terms' communities, the communities' lengths. */
export type TopicModelQueries = Pick<ResearchQueries, 'titleTerm' | 'topicTerms' | 'topicLengths'>;

/** A community's fit to the question by the topic model. */
export interface TopicFit {
  /** Its share of the question, 0..1 (the shares sum to 1). */
  share: number;
  /**
   * How much more likely its titles are than the corpus's to hold the question's terms (the sum
   * of the terms' log ratios, its size left out): above 0 when its titles use them more.
   */
  lift: number;
}

/**
 * Each community some question term names, with its share of the question (0..1, summing to 1);
 * empty when the snapshot holds no topic model or no term of the question.
 */
export function questionTopics(reader: TopicModelQueries, groups: readonly TermGroup[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const [topic, fit] of questionTopicFits(reader, groups)) out.set(topic, fit.share);
  return out;
}

/** Each community some question term names, with its share of the question and its terms' lift. */
export function questionTopicFits(
  reader: TopicModelQueries,
  groups: readonly TermGroup[],
): Map<number, TopicFit> {
  const out = new Map<number, TopicFit>();
  const lengths = reader.topicLengths();
  if (!lengths || lengths.total <= 0) return out;
  // Built by push: one array shape whatever the question (see match.ts ordinalsOf).
  const wanted: string[] = [];
  for (const g of groups) {
    const term = reader.titleTerm(g.word.toLowerCase());
    if (term !== null && !wanted.includes(term)) wanted.push(term);
  }
  const terms = reader.topicTerms(wanted);
  if (terms.size === 0) return out;
  // Per term: its share of all words, its communities' weights, and what a community left out
  // holds: none when the list is whole; else at most the least kept, at most the corpus's share.
  const parts = [...terms.values()].map((t) => {
    const weights = new Map<number, number>();
    let kept = 0;
    for (let i = 0; i < t.topics.length; i += 2) {
      weights.set(t.topics[i]!, t.topics[i + 1]!);
      kept += t.topics[i + 1]!;
    }
    const least = kept < t.weight ? (t.topics[t.topics.length - 1] ?? 0) : 0;
    return { share: t.weight / lengths.total, weights, least };
  });
  const candidates = new Set<number>();
  for (const p of parts) for (const topic of p.weights.keys()) candidates.add(topic);
  const scores: [number, number, number][] = [];
  let best = Number.NEGATIVE_INFINITY;
  for (const topic of candidates) {
    const length = lengths.weight.get(topic) ?? 0;
    let lift = 0;
    for (const p of parts) {
      const c = p.weights.get(topic) ?? Math.min(p.least, p.share * length);
      lift += Math.log((c + MU * p.share) / (length + MU)) - Math.log(p.share);
    }
    const score = (PRIOR * Math.log((lengths.titles.get(topic) ?? 0) + 1) + lift) / TEMPERATURE;
    scores.push([topic, score, lift]);
    if (score > best) best = score;
  }
  let sum = 0;
  for (const [, s] of scores) sum += Math.exp(s - best);
  for (const [topic, s, lift] of scores) out.set(topic, { share: Math.exp(s - best) / sum, lift });
  return out;
}

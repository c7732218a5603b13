import type { Community, ElementCommunity } from '../../contracts/research.js';
import type { ResearchQueries } from '../../snapshot/reader.js';
import { getOrCreate } from '../../util/maps.js';
import { subjectPath, type Viewer } from '../viewer.js';
import type { CandidateRow } from './candidates.js';
import { LOOSE_SCAN, type MatchedPaper, ordinalsOf } from './match.js';
import { ftsToken, groupExpr, questionElements, type TermGroup } from './question.js';
import { countTitleMatches, type TitleQueries } from './title-ranking.js';
import { questionTopics } from './topic-model.js';

/**
 * The research communities behind a question, ranked by the weight of the evidence: the topics
 * of the closest-matching papers (each paper weighing by how well its title matches), and the
 * topics whose own texts (name, description, taxonomy keywords) match the question; and inside
 * them, the sub-communities of the question's elements. A topic is never ranked by how many
 * loosely matched papers it holds: the biggest topics hold the most of any word.
 */

/** The closest-matching papers whose topics are the evidence (the first of the candidates). */
const EVIDENCE_PAPERS = 20;
/** Weight of a topic's own texts matching the question, beside its papers' (a share of 1). */
const TEXT_WEIGHT = 1;
/** A paper's weight among the closest: its title's relevance to this power (the best count most). */
const POW = 2;
/**
 * Weight of the whole matched pool (up to MATCH_CAP papers): each community's summed relevance
 * (squared) over its size to POOL_ALPHA, so a big community is not first for holding the most.
 */
const POOL_WEIGHT = 0.1;
const POOL_POW = 2;
const POOL_ALPHA = 0.3;
/** A topic's texts: the share of the question's words they hold, to this power. */
const TEXT_POW = 3;
/** A closest paper's other topics take this part of its weight (its primary topic all of it). */
const SECONDARY = 0.5;
/** Questions of at most this many words are matched to topic texts (see scoreCommunities). */
const TEXT_WORDS = 8;
/** Topics read by their texts per question. */
const TEXT_TOPICS = 20;
/** Weight of the topic model's share of the question (topic-model.ts), beside the papers' (a share of 1). */
const MODEL_WEIGHT = 0.5;
/** A community the topic model alone names counts from this share of the question. */
const MODEL_LEAST = 0.01;
/** The topic model's share from which a community's reason names it. */
const MODEL_SAID = 0.05;

/**
 * How well each candidate's title matches, 0..1: a title with every word of the question 1; a
 * looser match its bm25 as a share of the question's whole weight (the sum of its words' idf,
 * what a title of average length holding every word once scores), at most LOOSE_MOST. So a title
 * sharing one common word of the question weighs next to nothing beside one holding all of it.
 * The strict matches' own order (often unranked, see match.ts) never shows in it.
 */
const LOOSE_MOST = 0.9;
/** Words' titles are counted up to this (as the looser search counts them). */
const WORD_COUNT_BOUND = LOOSE_SCAN + 1;
export function titleRelevance(
  reader: TitleQueries,
  groups: readonly TermGroup[],
  corpusPapers: number,
  candidates: readonly MatchedPaper[],
): Map<number, number> {
  let whole = 0;
  if (candidates.some((m) => !m.allTerms)) {
    for (const g of groups) {
      // Counted as the looser search counts them (and memoized there): a common word's idf is small.
      const n = countTitleMatches(reader, groupExpr(g), WORD_COUNT_BOUND);
      const idf = Math.log((corpusPapers - n + 0.5) / (n + 0.5));
      whole += idf > 0 ? idf : 1e-6;
    }
  }
  const out = new Map<number, number>();
  for (const m of candidates)
    out.set(m.ordinal, m.allTerms ? 1 : whole > 0 ? Math.min(LOOSE_MOST, -m.score / whole) : LOOSE_MOST);
  return out;
}

/** A community's weight of evidence, its parts, and its topic id as a number. */
export interface ScoredCommunity {
  topic: number;
  score: number;
  /** The share of the closest papers' weight on it, 0..1. */
  papers: number;
  /** How well its own texts match, 0..1 of the best-matching topic's. */
  text: number;
  /** The share of the question's words its own texts (name, description, keywords) hold, 0..1. */
  covers: number;
  /** Its own texts hold the question as a whole: every word, next to one another in one text. */
  whole: boolean;
  /** Its matched papers' weight for its size, 0..1 of the best community's. */
  pool: number;
  /** Its share of the question by the topic model (what the titles teach of their communities), 0..1. */
  model: number;
  /** Closest papers that have it as a further (not primary) topic. */
  further: number;
  /** Closest papers (of EVIDENCE_PAPERS) in it, and matched papers in it in all. */
  closest: number;
  matched: number;
}

/** Every community with evidence, best first (ties by topic id). */
export function scoreCommunities(
  reader: ResearchQueries,
  groups: TermGroup[],
  candidates: readonly MatchedPaper[],
  rows: Map<number, CandidateRow>,
  relevance: Map<number, number>,
): ScoredCommunity[] {
  const byTopic = new Map<number, ScoredCommunity>();
  const of = (topic: number) =>
    getOrCreate(byTopic, topic, () => ({
      topic,
      score: 0,
      papers: 0,
      text: 0,
      covers: 0,
      whole: false,
      pool: 0,
      model: 0,
      closest: 0,
      further: 0,
      matched: 0,
    }));
  const closest = candidates.slice(0, EVIDENCE_PAPERS);
  let weight = 0;
  for (const m of closest) weight += (relevance.get(m.ordinal) ?? 0) ** POW;
  // A paper's primary topic takes its whole weight, its other topics a part of it.
  const topicsOf = reader.paperTopics(ordinalsOf(closest));
  for (const m of closest) {
    const c = rows.get(m.ordinal)?.cluster;
    const w = (relevance.get(m.ordinal) ?? 0) ** POW / weight;
    if (c != null) {
      const s = of(c);
      s.papers += w;
      s.closest++;
    }
    for (const id of topicsOf.get(m.ordinal) ?? []) {
      const t = Number(id.slice(1));
      if (t === c) continue;
      const s = of(t);
      s.papers += SECONDARY * w;
      s.further++;
    }
  }
  const matched = new Map<number, number>();
  const pool = new Map<number, number>();
  for (const m of candidates) {
    const c = rows.get(m.ordinal)?.cluster;
    if (c != null) {
      matched.set(c, (matched.get(c) ?? 0) + 1);
      pool.set(c, (pool.get(c) ?? 0) + (relevance.get(m.ordinal) ?? 0) ** POOL_POW);
    }
  }
  if (POOL_WEIGHT > 0 && pool.size > 0) {
    const sizes = reader.communitySizes();
    let best = 0;
    for (const [t, v] of pool) {
      const x = v / Math.max(1, sizes.get(t) ?? 1) ** POOL_ALPHA;
      pool.set(t, x);
      if (x > best) best = x;
    }
    for (const [t, v] of pool) of(t).pool = v / best;
  }
  // A topic's texts weigh by how much of the question they cover (every word: 1), cubed: in a
  // long question (a title) they hold a small share and weigh next to nothing, so they are read
  // only for questions of a few words, or when no title matches.
  if (groups.length > 0 && (groups.length <= TEXT_WORDS || candidates.length === 0)) {
    const described = reader.topicTextMatches(groups.map(groupExpr).join(' OR '), TEXT_TOPICS);
    const searchRows: number[] = [];
    for (const d of described) searchRows.push(d.row);
    const covered = new Map<number, number>();
    if (searchRows.length > 0)
      for (const g of groups)
        for (const row of reader.searchRowsMatching(groupExpr(g), searchRows))
          covered.set(row, (covered.get(row) ?? 0) + 1);
    const full: number[] = [];
    for (const d of described) {
      const t = of(Number(d.id.slice(1)));
      t.covers = (covered.get(d.row) ?? 0) / groups.length;
      t.text = t.covers ** TEXT_POW;
      if (t.covers === 1) full.push(d.row);
    }
    // The whole question, not its words scattered over a long description.
    const whole = new Set(full.length > 0 ? reader.searchRowsMatching(wholeQuestion(groups), full) : []);
    for (const d of described) if (whole.has(d.row)) of(Number(d.id.slice(1))).whole = true;
  }
  if (MODEL_WEIGHT > 0)
    for (const [topic, share] of questionTopics(reader, groups))
      if (share >= MODEL_LEAST || byTopic.has(topic)) of(topic).model = share;
  for (const s of byTopic.values()) {
    s.score = s.papers + TEXT_WEIGHT * s.text + POOL_WEIGHT * s.pool + MODEL_WEIGHT * s.model;
    s.matched = matched.get(s.topic) ?? 0;
  }
  return [...byTopic.values()].sort((a, b) => b.score - a.score || a.topic - b.topic);
}

/** At most this many communities are named. */
const NAMED_MOST = 10;
/** Closest papers having a community as a further topic that make it named (FURTHER_RANK permitting). */
const FURTHER_LEAST = 2;
/** A community named by further topics alone only among the first of the ranking. */
const FURTHER_RANK = 4;

/**
 * Whether a community has evidence enough to be named, at `rank` (0-based) of the ranking: papers
 * matching the question belong to it; or its own texts hold the question as a whole (not one
 * shared word: "evolution" does not make "Plant Diversity and Evolution" a community of "oxygen
 * evolution nickel"); or the titles' topic model gives it a fair share of the question
 * (MODEL_SAID); or, near the top, several of the closest papers have it as a further topic.
 * Tuned with `npm run eval:research` (docs/research-relevance.md).
 */
export function hasEvidence(
  s: Pick<ScoredCommunity, 'matched' | 'whole' | 'further' | 'model'>,
  rank: number,
): boolean {
  return (
    s.matched > 0 || s.whole || s.model >= MODEL_SAID || (s.further >= FURTHER_LEAST && rank < FURTHER_RANK)
  );
}

/** The question's words as one FTS expression: all of them within a word or so of each other. */
export function wholeQuestion(groups: readonly TermGroup[]): string {
  const words = groups.map((g) => ftsToken(g.word.toLowerCase()));
  return words.length === 1 ? words[0]! : `NEAR(${words.join(' ')}, ${words.length})`;
}

/**
 * The communities with evidence (hasEvidence), best first, at most ten, each with the reason it is
 * there; fewer when the evidence runs out. `found` counts every community with evidence, named or not.
 */
export function matchCommunities(
  reader: ResearchQueries,
  scored: readonly ScoredCommunity[],
  /** The matched papers in all. */
  matchedTotal: number,
  viewer: Viewer,
): { communities: Community[]; found: number } {
  const named: { s: ScoredCommunity; row: NonNullable<ReturnType<ResearchQueries['community']>> }[] = [];
  for (const [rank, s] of scored.entries()) {
    if (!hasEvidence(s, rank)) continue;
    const row = reader.community(`T${s.topic}`);
    if (row) named.push({ s, row });
  }
  const out: Community[] = [];
  for (const { s, row } of named.slice(0, NAMED_MOST)) {
    const reasons = [
      ...(s.closest > 0
        ? [
            `${s.closest} of the ${EVIDENCE_PAPERS} closest-matching papers belong to it (${Math.round(s.papers * 100)}% of their weight)`,
          ]
        : []),
      ...(s.further > 0
        ? [`${s.further} of the ${EVIDENCE_PAPERS} closest-matching papers have it as a further topic`]
        : []),
      ...(s.closest === 0 && s.matched > 0
        ? [`${s.matched} of the ${matchedTotal} matching papers belong to it`]
        : []),
      ...(s.whole
        ? [
            s.matched > 0
              ? 'its name, description or keywords hold the question'
              : 'found from its own texts: its name, description or keywords hold the question, though no matching paper belongs to it',
          ]
        : s.covers > 0
          ? [`its name, description or keywords hold ${Math.round(s.covers * 100)}% of the question's words`]
          : []),
    ];
    if (s.model >= MODEL_SAID)
      reasons.push(
        `its papers' titles use the question's words more than the corpus's titles do (${Math.round(s.model * 100)}% of the question by the titles' topic model)`,
      );
    out.push({
      subject_type: 'topic',
      subject_id: row.id,
      name: row.name,
      matching_papers: s.matched,
      rising: row.rising === 1,
      reason: reasons.join('; '),
      canonical_url: `${viewer.publicUrl}${subjectPath('topic', row.id)}`,
    });
  }
  return { communities: out, found: named.length };
}

/** Why a question's element sub-communities came back empty (matchElementCommunities' cases). */
export function whyNoElementCommunities(q: string, communities: readonly Community[]): string {
  const symbols = [...questionElements(q)];
  const why =
    symbols.length === 0
      ? 'the question names no element'
      : communities.length === 0
        ? 'the question has no community to divide'
        : `no paper of its communities names ${symbols.join(' or ')} in its title`;
  return `element_communities is empty: ${why}.`;
}

/** Element sub-communities: the question's elements inside the matched communities. */
export function matchElementCommunities(
  reader: ResearchQueries,
  q: string,
  communities: Community[],
): ElementCommunity[] {
  const symbols = questionElements(q);
  if (symbols.size === 0 || communities.length === 0) return [];
  const out: ElementCommunity[] = [];
  for (const symbol of symbols) {
    for (const c of communities) {
      const row = reader.elementCommunity(symbol, c.subject_id);
      if (!row) continue;
      out.push({
        symbol,
        topic_id: c.subject_id,
        topic_name: c.name,
        papers: row.paper_count,
        rising: row.rising === 1,
        reason: `${row.paper_count} papers of '${c.name}' name ${symbol} in their titles`,
      });
    }
  }
  return out.sort((a, b) => b.papers - a.papers).slice(0, 10);
}

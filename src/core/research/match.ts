import type { PaperQueries, PaperRow, ResearchQueries, ScoredPaper } from '../../snapshot/reader.js';
import { doiOf } from '../doi.js';
import { ServiceError } from '../errors.js';
import type { CandidateRow } from './candidates.js';
import { ftsToken, groupExpr, type TermGroup, termGroups } from './question.js';
import { countTitleMatches, hasTitleMatch, newestTitleMatches, titleMatches } from './title-ranking.js';

/**
 * Matching: the papers whose titles carry the question's words (every word first, then the
 * looser matches), and the paper a `paper=` names.
 */

export interface MatchedPaper {
  ordinal: number;
  score: number;
  allTerms: boolean;
}

/**
 * The ordinals of a list of papers, as an array built by push: every such array has one shape (one
 * from .map is holey when it has items and packed when empty), so research's optimised code does
 * not go back to the interpreter, and to a costly recompile, on meeting the other.
 */
export function ordinalsOf(list: readonly { ordinal: number }[]): number[] {
  const out: number[] = [];
  for (const m of list) out.push(m.ordinal);
  return out;
}

/** Candidates read per question (best bm25 first): enough for five pages of every lens and for the evidence. */
export const MATCH_CAP = 1_000;

/**
 * Title matches the looser search ranks by bm25 at most, as far as the question allows: bm25 reads
 * every title holding a word of the expression (hundreds of thousands for a common word at 1M
 * works), so the looser search reads the question's rarest words, which weigh most in bm25.
 */
export const LOOSE_SCAN = 20_000;

/**
 * The looser matches, when fewer than 20 titles have every word: titles with any of the words,
 * best first (bm25). The words are taken rarest first while their titles fit in LOOSE_SCAN
 * (always at least one; words are counted up to LOOSE_SCAN + 1, so beyond it the question's order
 * decides). When every word (three or more) has more matches than that, the titles with every word
 * but the last of the question come first, and are enough when they make 20 with the strict
 * matches; past them, the newest LOOSE_SCAN titles with the first word are ranked. At most
 * MATCH_CAP papers in all.
 */
function looseMatches(reader: ResearchQueries, groups: TermGroup[], strict: MatchedPaper[]): MatchedPaper[] {
  const seen = new Set(strict.map((p) => p.ordinal));
  const room = MATCH_CAP - strict.length;
  const out: MatchedPaper[] = [];
  const add = (chosen: { g: TermGroup; i: number }[], op: 'AND' | 'OR', scanNewest = false) => {
    // In the question's order, so the expression reads as the question does.
    const expr = [...chosen]
      .sort((a, b) => a.i - b.i)
      .map((c) => groupExpr(c.g))
      .join(` ${op} `);
    const found: ScoredPaper[] = scanNewest
      ? newestTitleMatches(reader, expr, LOOSE_SCAN, MATCH_CAP)
      : titleMatches(reader, expr, MATCH_CAP);
    for (const r of found) {
      if (out.length >= room) break;
      if (seen.has(r.ordinal)) continue;
      seen.add(r.ordinal);
      out.push({ ...r, allTerms: false });
    }
  };
  const counted = groups
    .map((g, i) => ({ g, i, n: countTitleMatches(reader, groupExpr(g), LOOSE_SCAN + 1) }))
    .filter((c) => c.n > 0)
    .sort((a, b) => a.n - b.n || a.i - b.i);
  if (counted.length === 0) return out;
  if (counted[0]!.n > LOOSE_SCAN && counted.length >= 3) {
    add(counted.slice(0, -1), 'AND');
    if (strict.length + out.length >= 20) return out;
  }
  const kept: typeof counted = [];
  let scanned = 0;
  for (const c of counted) {
    if (kept.length > 0 && scanned + c.n > LOOSE_SCAN) break;
    kept.push(c);
    scanned += c.n;
  }
  // One word with more matches than LOOSE_SCAN: its newest LOOSE_SCAN titles are ranked.
  add(kept, 'OR', scanned > LOOSE_SCAN);
  return out;
}

/** Fewer title matches than this with every word: the looser search fills the lists. */
const FEW_STRICT = 20;

/** The papers a question matches, and how its strict matches were ordered. */
export interface Matches {
  papers: MatchedPaper[];
  unmatched: string[];
  /**
   * The strict search's expression when its few matches (under FEW_STRICT) came unranked, in
   * ordinal order with score 0; `rankStrict` ranks them when their order can show in the answer.
   */
  unranked: string | null;
}

/**
 * Papers whose titles match: every term if any do, else any term, best first (bm25).
 * bm25 first passes over the papers of every word of the expression (its idf), which a question
 * of many common words (a paper= title) pays again for each search. So the titles with every word
 * are first found unranked: fewer than FEW_STRICT of them are all of them, and when their order
 * cannot show in the answer (strictOrderShows) they are not ranked at all.
 */
export function matchPapers(reader: ResearchQueries, groups: TermGroup[]): Matches {
  const unmatched = groups
    .filter((g) => !hasTitleMatch(reader, groupExpr(g)) && !reader.hasTopicMatch(groupExpr(g)))
    .map((g) => g.word);
  const usable = groups.filter((g) => !unmatched.includes(g.word));
  if (usable.length === 0) return { papers: [], unmatched, unranked: null };
  const expr = usable.map(groupExpr).join(' AND ');
  const few = reader.titleMatchOrdinals(expr, FEW_STRICT);
  const unranked = few.length < FEW_STRICT;
  const all = unranked
    ? few.map((ordinal) => ({ ordinal, score: 0 }))
    : titleMatches(reader, expr, MATCH_CAP);
  const papers: MatchedPaper[] = all.map((r) => ({ ...r, allTerms: true }));
  if (papers.length < FEW_STRICT && usable.length > 1) papers.push(...looseMatches(reader, usable, papers));
  return { papers, unmatched, unranked: unranked ? expr : null };
}

/** The strict matches ranked by bm25 (the same papers), ahead of the looser ones as before. */
export function rankStrict(reader: ResearchQueries, expr: string, papers: MatchedPaper[]): MatchedPaper[] {
  const ranked = titleMatches(reader, expr, MATCH_CAP).map((r) => ({ ...r, allTerms: true }));
  return [...ranked, ...papers.filter((m) => !m.allTerms)];
}

/**
 * Whether the order of the strict matches can show in the answer: the lists and communities read
 * it only to break ties, which are: two strict matches of the same impact (now: then bm25 decides),
 * two recent ones of the same date (newest: then the match order), and communities tied across the
 * tenth place among the evidence (the first seen is kept). Without such a tie any order of the
 * strict matches gives the same answer.
 */
export function strictOrderShows(
  candidates: MatchedPaper[],
  rows: Map<number, CandidateRow>,
  cutoffYear: number,
): boolean {
  const strict = candidates.filter((m) => m.allTerms);
  if (strict.length <= 1) return false;
  const impacts = new Set(strict.map((m) => rows.get(m.ordinal)?.impact_score ?? -1));
  if (impacts.size < strict.length) return true;
  const recent = strict.filter((m) => (rows.get(m.ordinal)?.year ?? 0) >= cutoffYear - 1);
  if (new Set(recent.map((m) => rows.get(m.ordinal)?.pub_date ?? 0)).size < recent.length) return true;
  const evidence = strict.length >= 10 ? strict : candidates;
  const byCluster = new Map<number, number>();
  for (const m of evidence) {
    const c = rows.get(m.ordinal)?.cluster;
    if (c != null) byCluster.set(c, (byCluster.get(c) ?? 0) + 1);
  }
  const counts = [...byCluster.values()].sort((a, b) => b - a);
  return counts.length > 10 && counts[9] === counts[10];
}

/** A paper given by DOI (bare, doi:, or the resolver's URL: doiOf) or by title. */
export function findPaper(
  reader: ResearchQueries & Pick<PaperQueries, 'paperRows'>,
  paper: string,
): PaperRow {
  const doi = doiOf(paper);
  let row = doi !== null ? reader.paperByDoi(doi) : undefined;
  if (doi === null) {
    const words = termGroups(paper).map((g) => ftsToken(g.word.toLowerCase()));
    if (words.length > 0) {
      // The best bm25 match; a lone match needs no ranking.
      const expr = words.join(' AND ');
      const few = reader.titleMatchOrdinals(expr, 2);
      const ordinal = few.length > 1 ? titleMatches(reader, expr, 1)[0]?.ordinal : few[0];
      row = ordinal === undefined ? undefined : reader.paperRows([ordinal])[0];
    }
  }
  if (!row) {
    throw new ServiceError('unknown_paper', `No paper matching '${paper}' is in the corpus.`, {
      parameter: 'paper',
    });
  }
  return row;
}

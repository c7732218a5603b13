import type {
  CandidateRow,
  PaperQueries,
  PaperRow,
  ResearchQueries,
  ScoredPaper,
} from '../../snapshot/reader.js';
import { ServiceError } from '../errors.js';
import { ftsToken, groupExpr, type TermGroup, termGroups } from './question.js';

/**
 * Matching: the papers whose titles carry the question's words (every word first, then the
 * looser matches), the paper a `paper=` names, and what is read of every candidate.
 */

export interface MatchedPaper {
  ordinal: number;
  score: number;
  allTerms: boolean;
}

/** Candidates read per question (best bm25 first): enough for five pages of every lens and for the evidence. */
export const MATCH_CAP = 1_000;

/**
 * Title matches the looser search ranks by bm25 at most, as far as the question allows: bm25 reads
 * every title holding a word of the expression (hundreds of thousands for a common word at 1M
 * works), so the looser search reads the question's rarest words, which weigh most in bm25.
 */
const LOOSE_SCAN = 20_000;

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
      ? reader.newestTitleMatches(expr, LOOSE_SCAN, MATCH_CAP)
      : reader.titleMatches(expr, MATCH_CAP);
    for (const r of found) {
      if (out.length >= room) break;
      if (seen.has(r.ordinal)) continue;
      seen.add(r.ordinal);
      out.push({ ...r, allTerms: false });
    }
  };
  const counted = groups
    .map((g, i) => ({ g, i, n: reader.countTitleMatches(groupExpr(g), LOOSE_SCAN + 1) }))
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

/**
 * Title matches of an FTS expression, best bm25 first, at most `limit`. bm25 first passes over the
 * papers of every word of the expression (its idf), which a question with many common words (a
 * paper= title) pays again for each query; when at most one title matches there is nothing to rank,
 * so that title is found unranked. Its score is then 0: a lone match's score is never compared (the
 * lists compare scores only between matches of the same kind, strict or loose).
 */
function rankedTitleMatches(reader: ResearchQueries, expr: string, limit: number): ScoredPaper[] {
  const few = reader.titleMatchOrdinals(expr, 2);
  if (few.length <= 1) return few.map((ordinal) => ({ ordinal, score: 0 }));
  return reader.titleMatches(expr, limit);
}

/** Papers whose titles match: every term if any do, else any term, best first (bm25). */
export function matchPapers(
  reader: ResearchQueries,
  groups: TermGroup[],
): { papers: MatchedPaper[]; unmatched: string[] } {
  const unmatched = groups
    .filter((g) => !reader.hasTitleMatch(groupExpr(g)) && !reader.hasTopicMatch(groupExpr(g)))
    .map((g) => g.word);
  const usable = groups.filter((g) => !unmatched.includes(g.word));
  if (usable.length === 0) return { papers: [], unmatched };
  const all = rankedTitleMatches(reader, usable.map(groupExpr).join(' AND '), MATCH_CAP);
  const papers: MatchedPaper[] = all.map((r) => ({ ...r, allTerms: true }));
  if (papers.length < 20 && usable.length > 1) papers.push(...looseMatches(reader, usable, papers));
  return { papers, unmatched };
}

/** A paper given by DOI (with or without the resolver) or by title. */
export function findPaper(
  reader: ResearchQueries & Pick<PaperQueries, 'paperRows'>,
  paper: string,
): PaperRow {
  const doi = paper
    .trim()
    .replace(/^https?:\/\/(dx\.)?doi\.org\//i, '')
    .toLowerCase();
  let row = /^10\.\d{4,9}\//.test(doi) ? reader.paperByDoi(doi) : undefined;
  if (!row && !/^10\.\d{4,9}\//.test(doi)) {
    const words = termGroups(paper).map((g) => ftsToken(g.word.toLowerCase()));
    if (words.length > 0) {
      // The best bm25 match; a lone match needs no ranking (see rankedTitleMatches).
      const expr = words.join(' AND ');
      const few = reader.titleMatchOrdinals(expr, 2);
      row =
        few.length === 1 ? reader.paperRows(few)[0] : few.length > 1 ? reader.paperByTitle(expr) : undefined;
    }
  }
  if (!row) {
    throw new ServiceError('unknown_paper', `No paper matching '${paper}' is in the corpus.`, {
      parameter: 'paper',
    });
  }
  return row;
}

/** What the lists, the evidence and the communities read of every candidate, by ordinal. */
export function loadCandidates(
  reader: ResearchQueries,
  ordinals: number[],
  withRefs: boolean,
): Map<number, CandidateRow> {
  return new Map(reader.candidateRows(ordinals, withRefs).map((r) => [r.ordinal, r]));
}

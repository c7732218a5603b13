import { operation, priceOf } from '../access/policy.js';
import type { ResearchAnswer } from '../contracts/research.js';
import { MAX_PAGES } from '../contracts/research-request.js';
import { type SharedColumns, sharePaperColumns } from '../snapshot/paper-columns.js';
import type { PaperQueries, ResearchQueries, SnapshotView } from '../snapshot/reader.js';
import { ServiceError } from './errors.js';
import { PAPER_NOTES } from './notes.js';
import { loadCandidates, RESEARCH_COLUMNS, warmCandidates } from './research/candidates.js';
import {
  matchCommunities,
  matchElementCommunities,
  scoreCommunities,
  titleRelevance,
  whyNoElementCommunities,
} from './research/communities.js';
import { readingLists } from './research/lenses.js';
import {
  findPaper,
  MATCH_CAP,
  type MatchedPaper,
  matchPapers,
  rankStrict,
  strictOrderShows,
} from './research/match.js';
import { pageCount, pastTheLastPage } from './research/pages.js';
import { groupExpr, termGroups } from './research/question.js';
import type { ResearchRequest } from './research/request.js';
import { envelope, type Viewer } from './viewer.js';

/**
 * The research search: a question (or a paper) -> the research communities and element
 * sub-communities behind it, and three reading lists (foundational, now, newest).
 * Matching is full-text over paper titles and community texts (porter stemming), with
 * abbreviations and element symbols expanded, and papers whose titles carry every word first.
 * Communities are ranked by the weight of evidence (the closest titles' topics, weighed by how
 * much of the question each title holds; the whole pool for community size; the share of the
 * question a community's own texts hold); now and newest put the close matches first. Judged on
 * held-out works against a plain BM25 by `npm run eval:research` (docs/research-relevance.md).
 * The parts, one job each, are in research/: question (the words and their expansions), match
 * (the papers), lenses (the reading lists), communities.
 */
export { researchPage } from './research/pages.js';
export { LENSES, type ResearchRequest, researchRequest } from './research/request.js';

/**
 * How many communities the answer names of those with evidence: a community is named only when
 * papers matching the question belong to it or its own texts hold the whole question.
 */
function communitiesNote(named: number, found: number): string {
  const which =
    'a community is named when papers matching the question belong to it, when its name, description or keywords hold the question as a whole, when its titles hold a fair share of the question, or when several of the closest papers have it as a further topic';
  if (found === named)
    return `${found} ${found === 1 ? 'community has' : 'communities have'} evidence for this question, all named (${which}).`;
  return `${found} communities have evidence for this question; the ${named} with the most are named (${which}).`;
}

/** How a research answer's papers are read (the paper notes and what a page and matched_papers are). */
export const RESEARCH_PAPER_NOTES =
  `${PAPER_NOTES} Each list holds page_size papers per page, up to ${MAX_PAGES} pages. matched_papers counts ` +
  `the best-matching papers considered (at most ${MATCH_CAP}); communities come from the closest of them and from community texts, citation counts from them.`;

/** One page's price, from the price table. */
const PRICE_PER_PAGE_USD = priceOf(operation('research'))!;

/** The answer's type, inferred from its contract (src/contracts/research.ts): it cannot drift. */
export type { ResearchAnswer } from '../contracts/research.js';

/**
 * Reads what research keeps per snapshot (the candidates' columns, about 110 MB at 1M works, and
 * the titles' statistics, read on a thread of their own) before a question needs them: a worker
 * does it when a snapshot is published, so its first question does not wait about a second. With
 * `share`, the columns go to shared memory and are returned, for the other workers.
 */
export function warmResearch(snapshot: SnapshotView<ResearchQueries>, share = false): SharedColumns | null {
  let columns: SharedColumns | null = null;
  if (share) columns = sharePaperColumns(snapshot, RESEARCH_COLUMNS);
  else warmCandidates(snapshot);
  snapshot.reader.startTitleRanking();
  return columns;
}

export function research(
  snapshot: SnapshotView<ResearchQueries & PaperQueries>,
  request: ResearchRequest,
  viewer: Viewer,
): ResearchAnswer {
  const seed = request.paper ? findPaper(snapshot.reader, request.paper) : null;
  const q = seed ? (seed.title ?? '') : (request.q ?? '');
  const groups = termGroups(q);
  const { papers: matched, unmatched, unranked } = matchPapers(snapshot.reader, groups);
  const usableGroups = groups.filter((g) => !unmatched.includes(g.word));
  const matchedSet = new Set(matched.map((m) => m.ordinal));
  if (seed) matchedSet.delete(seed.ordinal);
  const notSeed = (list: MatchedPaper[]) => list.filter((m) => matchedSet.has(m.ordinal));
  let candidates = notSeed(matched);
  // No title matches: the communities whose own texts match still answer (404 only when neither
  // titles nor topic texts match).
  if (
    candidates.length === 0 &&
    (usableGroups.length === 0 || !snapshot.reader.hasTopicMatch(usableGroups.map(groupExpr).join(' OR ')))
  ) {
    throw new ServiceError('nothing_matched', `Nothing in the corpus matches '${q}'.`, {
      unmatched_terms: unmatched,
      suggestion: 'Use fewer or broader words, or element names rather than formulas.',
    });
  }

  const rows = loadCandidates(
    snapshot,
    candidates.map((c) => c.ordinal),
  );
  // A few strict matches come unranked; ranked (bm25) only when their order can show.
  const cutoffYear = Number((snapshot.meta.cutoff_date ?? '0').slice(0, 4));
  if (unranked && strictOrderShows(candidates, rows, cutoffYear)) {
    candidates = notSeed(rankStrict(snapshot.reader, unranked, matched));
  }
  const total = candidates.length;
  // Citations (foundational) come from the papers with every word when there are enough of
  // them; communities from the closest matches, weighed by how well they match.
  const strict = candidates.filter((m) => m.allTerms);
  const evidence = strict.length >= 10 ? strict : candidates;
  const relevance = titleRelevance(
    snapshot.reader,
    usableGroups,
    Number(snapshot.meta.corpus_papers ?? 0),
    candidates,
  );
  const scored = scoreCommunities(snapshot.reader, usableGroups, candidates, rows, relevance);
  const bestScore = scored[0]?.score ?? 0;
  const communityShare = new Map(scored.map((c) => [c.topic, bestScore > 0 ? c.score / bestScore : 0]));
  const { lists, longest, empty } = readingLists(snapshot, request, {
    candidates,
    evidence,
    rows,
    seed,
    relevance,
    communityShare,
  });
  const pages = pageCount(longest, request.pageSize);
  // A page past the last is refused, never sold with empty lists.
  if (request.page > pages) throw pastTheLastPage(request, pages);

  const { communities, found } = matchCommunities(snapshot.reader, scored, total, viewer);
  const elementCommunities = matchElementCommunities(snapshot.reader, q, communities);
  const nextPage = request.page + 1;
  // next names the snapshot this page came from, pinned or not: the following page is then sold
  // from the same data (pages of one answer), and a pinned answer stays byte for byte the same.
  const query = new URLSearchParams({
    ...(request.paper ? { paper: request.paper } : { q }),
    page_size: String(request.pageSize),
    lenses: request.lenses.join(','),
    page: String(nextPage),
    data_version: snapshot.version,
  });
  return {
    q,
    page: request.page,
    page_size: request.pageSize,
    pages,
    matched_papers: total,
    communities,
    element_communities: elementCommunities,
    lists,
    unmatched_terms: unmatched,
    next:
      nextPage <= pages
        ? {
            url: `${viewer.publicUrl}/v1/research?${query}`,
            price: { usd: PRICE_PER_PAGE_USD, currency: 'USD' },
          }
        : null,
    ...envelope(
      snapshot,
      viewer,
      `/research?${new URLSearchParams(request.paper ? { paper: request.paper } : { q })}`,
      {
        papers: RESEARCH_PAPER_NOTES,
        communities: communitiesNote(communities.length, found),
        // The reading lists say why they are empty themselves (readingLists).
        ...(empty.length > 0 ? { empty: empty.join(' ') } : {}),
      },
      [
        [
          communities,
          () =>
            "communities is empty: no community's name, description or keywords hold the whole question, and none of the matching papers belongs to one.",
        ],
        [elementCommunities, () => whyNoElementCommunities(q, communities)],
      ],
    ),
  };
}

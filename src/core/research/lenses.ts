import type { ResearchPaper } from '../../contracts/research.js';
import type { ColumnQueries, PaperQueries, PaperRow, SnapshotView } from '../../snapshot/reader.js';
import { mostCited } from '../most-cited.js';
import { loadPaperRows, openAlexId, paperLink } from '../paper-row.js';
import { type CandidateRow, references } from './candidates.js';
import { type MatchedPaper, ordinalsOf } from './match.js';
import type { Lens, ResearchRequest } from './request.js';

/**
 * The three reading lists over the matched papers: foundational (what they cite most), now
 * (highest impact) and newest (the last two years of the data), one page of each lens asked.
 */

export interface Matched {
  /** Every candidate, best match first. */
  candidates: MatchedPaper[];
  /** The candidates the citations are counted from. */
  evidence: MatchedPaper[];
  rows: Map<number, CandidateRow>;
  /** The paper a `paper=` question names (its references count too). */
  seed: PaperRow | null;
  /** How well each candidate's title matches, 0..1 (communities.ts titleRelevance). */
  relevance: Map<number, number>;
  /** Each community's weight of evidence as a share of the best community's, by topic. */
  communityShare: Map<number, number>;
}

/** How much a paper's fit rises in the question's best community (less in the weaker ones). */
const COMMUNITY_LIFT = 2;
/** A close match: a fit at least this share of the best fit. */
const CLOSE = 0.6;

export interface ReadingLists {
  lists: Partial<Record<Lens, ResearchPaper[]>>;
  /** The longest list's length over every page (its pages are the answer's). */
  longest: number;
  /** Why a list came back empty, one sentence each. */
  empty: string[];
}

function toPaper(p: PaperRow, reason: string): ResearchPaper {
  return {
    title: p.title,
    doi: p.doi,
    openalex_id: openAlexId(p),
    link: paperLink(p),
    venue: p.venue,
    year: p.year,
    citations: p.citations,
    impact_score: p.impact_score,
    reason,
  };
}

/** A page of matched papers, loaded in full and each given its one-line reason. */
function showPage(
  snapshot: SnapshotView<PaperQueries>,
  page: MatchedPaper[],
  reason: (m: MatchedPaper, p: PaperRow) => string,
): ResearchPaper[] {
  const shown = loadPaperRows(snapshot, ordinalsOf(page));
  return page.map((m) => {
    const p = shown.get(m.ordinal)!;
    return toPaper(p, reason(m, p));
  });
}

export function readingLists(
  snapshot: SnapshotView<PaperQueries & ColumnQueries>,
  request: Pick<ResearchRequest, 'lenses' | 'page' | 'pageSize'>,
  { candidates, evidence, rows, seed, relevance, communityShare }: Matched,
): ReadingLists {
  const total = candidates.length;
  const start = (request.page - 1) * request.pageSize;
  const end = start + request.pageSize;
  const lists: Partial<Record<Lens, ResearchPaper[]>> = {};
  const cutoffYear = Number((snapshot.meta.cutoff_date ?? '0').slice(0, 4));
  // How well each paper fits the question: its title's match, raised when it belongs to the
  // question's leading communities; the close matches are the strict ones and those near the best.
  const fit = new Map<number, number>();
  let bestFit = 0;
  for (const m of candidates) {
    const c = rows.get(m.ordinal)?.cluster;
    const f =
      (relevance.get(m.ordinal) ?? 0) * (1 + COMMUNITY_LIFT * (c == null ? 0 : (communityShare.get(c) ?? 0)));
    fit.set(m.ordinal, f);
    if (f > bestFit) bestFit = f;
  }
  const fitOf = (m: MatchedPaper) => fit.get(m.ordinal) ?? 0;
  const isClose = (m: MatchedPaper) => m.allTerms || fitOf(m) >= CLOSE * bestFit;
  /**
   * The close matches first, by `then` (highest first); the looser ones by fit, then by `then`;
   * ties: titles with every word first (a loose match raised by its community is close too, and
   * must not pass one for a tie), then fit, bm25 and ordinal. Each paper's keys are computed once.
   */
  const relevantFirst = (list: MatchedPaper[], then: (m: MatchedPaper) => number) =>
    list
      .map((m) => ({ m, close: isClose(m), fit: fitOf(m), key: then(m) }))
      .sort(
        (a, b) =>
          Number(b.close) - Number(a.close) ||
          (a.close ? 0 : b.fit - a.fit) ||
          b.key - a.key ||
          Number(b.m.allTerms) - Number(a.m.allTerms) ||
          b.fit - a.fit ||
          a.m.score - b.m.score ||
          a.m.ordinal - b.m.ordinal,
      )
      .map((k) => k.m);
  const howItMatched = (m: MatchedPaper) =>
    m.allTerms
      ? 'its title has every word of the question'
      : `${isClose(m) ? 'a close' : 'a looser'} title match (${Math.round((100 * fitOf(m)) / bestFit)}% of the best fit${
          (relevance.get(m.ordinal) ?? 0) < fitOf(m) ? ', raised as it is in a leading community' : ''
        })`;
  let longest = 0;
  // Why a list came back empty, said in the notes (a client should not have to guess).
  const empty: string[] = [];
  const pastTheEnd = (lens: Lens, n: number, what: string) =>
    `${lens} is empty: its ${n} ${what} fill the pages before page ${request.page}.`;
  const nothingOr = (lens: Lens, n: number, what: string) =>
    total === 0
      ? `${lens} is empty: no paper title matches the question; its communities were found from their descriptions.`
      : pastTheEnd(lens, n, what);

  for (const lens of request.lenses) {
    let list: ResearchPaper[] = [];
    if (lens === 'now') {
      // The close matches first, by impact; then the looser ones by how well they match (a
      // loose match never leads for having citation data).
      const ordered = relevantFirst(candidates, (m) => rows.get(m.ordinal)?.impact_score ?? -1);
      list = showPage(snapshot, ordered.slice(start, end), (m, p) => {
        const impactWords =
          p.impact_score === null
            ? 'no citation data, so after the close matches with known impact'
            : `impact score ${p.impact_score.toFixed(1)} (percentile of projected citations in its field and year)`;
        return `${howItMatched(m)}; ${impactWords}`;
      });
      longest = Math.max(longest, ordered.length);
      if (start >= ordered.length) empty.push(nothingOr(lens, ordered.length, 'papers'));
    } else if (lens === 'newest') {
      const recent = candidates.filter((m) => (rows.get(m.ordinal)?.year ?? 0) >= cutoffYear - 1);
      // YYYYMMDD numbers: their order is the dates'.
      const ordered = relevantFirst(recent, (m) => rows.get(m.ordinal)?.pub_date ?? 0);
      list = showPage(
        snapshot,
        ordered.slice(start, end),
        (m, p) =>
          `${howItMatched(m)}; published ${p.pub_date ?? p.year}, within the last two years of the data`,
      );
      longest = Math.max(longest, ordered.length);
      if (start >= ordered.length) {
        empty.push(
          total === 0
            ? nothingOr(lens, 0, 'papers')
            : ordered.length === 0
              ? `newest is empty: none of the ${total} papers matching this question was published in ${cutoffYear - 1} or ${cutoffYear}, the last two years of the data (cut-off ${snapshot.meta.cutoff_date}).`
              : pastTheEnd(lens, ordered.length, 'recent papers'),
        );
      }
    } else {
      // Foundational: the papers the matching papers cite most (found through their references).
      const cites = references(snapshot);
      const { page: slice, distinct } = mostCited(citing(evidence, seed, cites), start, end);
      const classics = loadPaperRows(snapshot, firstOf(slice));
      let shown = 0;
      for (const [o, n] of slice) {
        const p = classics.get(o);
        if (!p) continue;
        list.push(toPaper(p, `cited by ${n} of the ${evidence.length} papers matching this question`));
        shown++;
      }
      longest = Math.max(longest, distinct);
      // Counted, not list.length: an empty and a full list are arrays of two shapes, and reading
      // the length of both sent this function back to the interpreter at every question.
      if (shown === 0) {
        empty.push(
          distinct === 0
            ? `foundational is empty: the ${evidence.length} papers matching this question carry no references to papers in this corpus, so no foundational list can be drawn (it is made of the papers they cite most).`
            : pastTheEnd(lens, distinct, 'cited papers'),
        );
      }
    }
    lists[lens] = list;
  }
  return { lists, longest, empty };
}

/** Each evidence paper's references, and the seed's: one array of one shape (built by push). */
function citing(
  evidence: readonly MatchedPaper[],
  seed: PaperRow | null,
  cites: (ordinal: number) => Int32Array,
): Int32Array[] {
  const out: Int32Array[] = [];
  for (const m of evidence) out.push(cites(m.ordinal));
  if (seed) out.push(cites(seed.ordinal));
  return out;
}

/** The first item of each pair (built by push, as ordinalsOf). */
function firstOf(pairs: readonly [number, number][]): number[] {
  const out: number[] = [];
  for (const [o] of pairs) out.push(o);
  return out;
}

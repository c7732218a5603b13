import type { Notes, PaperEntry, PaperSort } from '../contracts/common.js';
import type { ElementPapersAnswer } from '../contracts/elements.js';
import type { SubjectPapersAnswer } from '../contracts/subjects.js';
import { decodeRanked } from '../snapshot/ranked.js';
import type { PaperQueries, SnapshotView } from '../snapshot/reader.js';
import { mostThatFit, RESULT_TOKENS, withinBudget } from './answer-size.js';
import { answerText } from './answer-text.js';
import { canonicalSymbol } from './elements.js';
import { ServiceError } from './errors.js';
import { PAPER_NOTES } from './notes.js';
import { loadPaperRows, openAlexId, paperLink } from './paper-row.js';
import { findSubject, type SubjectType } from './subjects.js';
import { envelope, subjectPath, type Viewer } from './viewer.js';

/**
 * The ranked papers of an element, topic or keyword (at most 100, rank 1 first), with every
 * field of the spec; null when the subject does not exist in this snapshot.
 */
export function rankedPapers(
  snapshot: SnapshotView<PaperQueries>,
  type: 'element' | 'topic' | 'keyword',
  id: string,
): { papers: PaperEntry[]; totalRanked: number; totalPapers: number } | null {
  const subject = snapshot.reader.rankedPapers(type, id);
  if (!subject) return null;
  const papers = paperEntries(snapshot, decodeRanked(subject.ranked));
  return { papers, totalRanked: subject.total_ranked, totalPapers: subject.paper_count };
}

/** Ranked papers (ordinal, rank, ris_contribution) as paper entries, in the order given. */
export function paperEntries(
  snapshot: SnapshotView<PaperQueries>,
  ranked: readonly { ordinal: number; rank: number; risContribution: number }[],
): PaperEntry[] {
  const byOrdinal = loadPaperRows(
    snapshot,
    ranked.map((r) => r.ordinal),
  );
  return ranked.map((r) => {
    const p = byOrdinal.get(r.ordinal)!;
    const cluster = p.cluster === null ? null : `T${p.cluster}`;
    return {
      title: p.title,
      doi: p.doi,
      openalex_id: openAlexId(p),
      venue: p.venue,
      year: p.year,
      citations: p.citations,
      link: paperLink(p),
      impact_score: p.impact_score,
      citation_percentile: p.citation_percentile,
      cluster,
      cluster_name: cluster ? (snapshot.reader.topicName(cluster) ?? null) : null,
      rank: r.rank,
      ris_contribution: r.risContribution,
      publication_date: p.pub_date,
      elements: p.elements ? p.elements.split(',') : [],
      keywords: p.keywords ? p.keywords.split(',') : [],
    };
  });
}

interface PaperListOptions {
  sort: PaperSort;
  limit: number;
  /** Element route only: keep papers with this headline keyword (slug or name). */
  keyword?: string;
}

const byNewest = (a: PaperEntry, b: PaperEntry) =>
  (b.publication_date ?? '').localeCompare(a.publication_date ?? '') || a.rank - b.rank;
// Most cited first; unknown citation counts last (never as zero).
const byFoundational = (a: PaperEntry, b: PaperEntry) =>
  (b.citations ?? -1) - (a.citations ?? -1) || a.rank - b.rank;

/** The list asked for, and how many ranked papers the filter leaves (its total_ranked). */
function arrange(papers: PaperEntry[], options: PaperListOptions): { papers: PaperEntry[]; total: number } {
  let list = papers;
  if (options.keyword) {
    const slug = options.keyword;
    list = list.filter((p) => p.keywords.includes(slug));
  }
  if (options.sort === 'newest') list = [...list].sort(byNewest);
  else if (options.sort === 'foundational') list = [...list].sort(byFoundational);
  return { papers: list.slice(0, options.limit), total: list.length };
}

/** An element's papers: its top 100, optionally filtered by keyword, sorted and cut to the limit. */
export function elementPapers(
  snapshot: SnapshotView,
  symbol: string,
  options: PaperListOptions,
  viewer: Viewer,
): ElementPapersAnswer {
  const canonical = canonicalSymbol(symbol);
  const keyword = options.keyword === undefined ? undefined : knownKeyword(snapshot, options.keyword);
  const ranked = rankedPapers(snapshot, 'element', canonical)!;
  const { papers, total } = arrange(ranked.papers, {
    ...options,
    ...(keyword ? { keyword: keyword.id } : {}),
  });
  const whyEmpty = () =>
    ranked.totalRanked === 0
      ? `papers is empty: no paper of this corpus names ${canonical} in its title (a paper counts only for the elements its title names), so none is ranked.`
      : `papers is empty: no paper among the ${ranked.totalRanked} ranked papers of ${canonical} has the keyword '${keyword!.name}' ` +
        `(${keyword!.paperCount} papers of the corpus have it): the filter reads only the element's top ` +
        `${ranked.totalRanked}. The keyword's own top papers: ${viewer.publicUrl}/v1${subjectPath('keyword', keyword!.id)}/papers.`;
  return {
    symbol: canonical,
    keyword: keyword?.id ?? null,
    sort: options.sort,
    limit: options.limit,
    // What the keyword filter leaves of the ranked papers: what a client can reach with it.
    total_ranked: total,
    papers,
    ...envelope(snapshot, viewer, `/elements/${canonical}`, { papers: PAPER_NOTES }, [[papers, whyEmpty]]),
  };
}

/** The keyword a filter names (slug or name, any case), or 404 unknown_subject with suggestions. */
function knownKeyword(
  snapshot: SnapshotView,
  keyword: string,
): { id: string; name: string; paperCount: number } {
  const slug = keyword.trim().toLowerCase().replace(/\s+/g, '-');
  try {
    const row = findSubject(snapshot, 'keyword', slug);
    return { id: row.id, name: row.name, paperCount: row.paper_count };
  } catch (e) {
    if (!(e instanceof ServiceError) || e.code !== 'unknown_subject') throw e;
    throw new ServiceError('unknown_subject', `Parameter 'keyword': no keyword '${keyword}' in this data.`, {
      ...e.extra,
      parameter: 'keyword',
    });
  }
}

/** A topic's or keyword's papers; topics also say how many papers they really have. */
export function subjectPapers(
  snapshot: SnapshotView,
  type: SubjectType,
  id: string,
  options: PaperListOptions,
  viewer: Viewer,
): SubjectPapersAnswer {
  const subject = findSubject(snapshot, type, id);
  const ranked = rankedPapers(snapshot, type, subject.id)!;
  const papers = arrange(ranked.papers, options).papers;
  const whyEmpty = () =>
    `papers is empty: no paper of this corpus has '${subject.name}' as a headline ${type}, so none is ranked.`;
  return {
    subject_type: type,
    subject_id: subject.id,
    name: subject.name,
    sort: options.sort,
    limit: options.limit,
    total_ranked: ranked.totalRanked,
    ...(type === 'topic' ? { total_papers: ranked.totalPapers } : {}),
    papers,
    ...envelope(snapshot, viewer, subjectPath(type, subject.id), { papers: PAPER_NOTES }, [
      [papers, whyEmpty],
    ]),
  };
}

/** A paper list or a lab run: what fitPapers cuts and notes. */
interface PaperAnswer {
  papers: PaperEntry[];
  notes: Notes;
}

/**
 * A paper answer (a paper list, a lab run) held to what a model's context can take (`budget`
 * estimated tokens of its text, answer-size.ts), as fitHistory holds a history: unchanged when it
 * fits; else its first papers in the list's own order, as many as fit, and notes.left_out says
 * which are left out and where the whole answer is (`whole`: its URL and how to read it). A paper
 * list has no pages, so no arguments get only the rest.
 */
export function fitPapers<T extends PaperAnswer>(answer: T, whole: string, budget = RESULT_TOKENS): T {
  const listed = answer.papers.length;
  const fits = (a: T) => withinBudget(answerText(a), budget);
  if (listed <= 1 || fits(answer)) return answer;
  const kept = mostThatFit(1, listed - 1, (n) => fits(firstPapers(answer, n, whole, budget)));
  return firstPapers(answer, kept, whole, budget);
}

/** The answer with its `kept` first papers, and the note that says what is left out. */
function firstPapers<T extends PaperAnswer>(answer: T, kept: number, whole: string, budget: number): T {
  const listed = answer.papers.length;
  const count = (n: number) => n.toLocaleString('en-US');
  const left_out =
    `Papers ${kept + 1} to ${listed} of the list (${listed - kept} of ${listed}) are left out: a result holds ` +
    `about ${count(budget)} tokens and keeps the first papers that fit. A paper list has no pages: no call of ` +
    `this tool gets only those. The whole answer: ${whole}.`;
  return { ...answer, papers: answer.papers.slice(0, kept), notes: { ...answer.notes, left_out } };
}

import { operation, priceOf } from '../access/policy.js';
import { ELEMENTS, findElement } from '../elements/elements.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { tagElements } from '../tagging/tagger.js';
import { ServiceError } from './errors.js';
import { mostCited } from './most-cited.js';
import { PAPER_NOTES } from './notes.js';
import { loadPaperRows, PAPER_COLUMNS, type PaperRow, paperLink } from './paper-row.js';
import { type Envelope, envelope, type Viewer } from './viewer.js';

/**
 * The research search: a question (or a paper) -> the research communities and element
 * sub-communities behind it, and three reading lists (foundational, now, newest).
 * Matching is full-text over paper titles and community descriptions (porter stemming), with
 * abbreviations and element symbols expanded, and papers whose titles carry every word first.
 */
export type Lens = 'foundational' | 'now' | 'newest';
export const LENSES: readonly Lens[] = ['foundational', 'now', 'newest'];
export const MAX_PAGES = 5;
/** One page's price, from the price table. */
export const PRICE_PER_PAGE_USD = priceOf(operation('research'))!;

export interface ResearchRequest {
  q?: string;
  paper?: string;
  pageSize: number;
  lenses: Lens[];
  page: number;
}

/** Shorthand of the field, expanded before matching (the question keeps its own words too). */
const ABBREVIATIONS: Record<string, string> = {
  her: 'hydrogen evolution',
  oer: 'oxygen evolution',
  orr: 'oxygen reduction',
  co2rr: 'co2 reduction',
  nrr: 'nitrogen reduction',
  sei: 'solid electrolyte interphase',
  ldh: 'layered double hydroxide',
  mof: 'metal organic framework',
  mofs: 'metal organic framework',
  cof: 'covalent organic framework',
  dft: 'density functional theory',
  sofc: 'solid oxide fuel cell',
  pem: 'proton exchange membrane',
  lib: 'lithium ion battery',
  libs: 'lithium ion battery',
  saa: 'single atom',
  sac: 'single atom catalyst',
  sacs: 'single atom catalyst',
};

const STOP_WORDS = new Set([
  'a',
  'an',
  'and',
  'the',
  'of',
  'for',
  'in',
  'on',
  'to',
  'with',
  'by',
  'from',
  'at',
  'is',
  'are',
  'vs',
  'via',
]);

interface TermGroup {
  /** The word of the question. */
  word: string;
  /** FTS alternatives: the word, its expansion, the element name or symbol. */
  alternatives: string[];
}

function ftsToken(s: string): string {
  return `"${s.replaceAll('"', '')}"`;
}

/** The question's words with their expansions (HER -> hydrogen evolution; Li <-> lithium). */
export function termGroups(q: string): TermGroup[] {
  const words = q
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0)
    .slice(0, 16);
  const groups: TermGroup[] = [];
  for (const raw of words) {
    const word = raw.toLowerCase();
    if (STOP_WORDS.has(word)) continue;
    const alternatives = [ftsToken(word)];
    // Own keys only: a question word such as 'constructor' is not an abbreviation.
    const expansion = Object.hasOwn(ABBREVIATIONS, word) ? ABBREVIATIONS[word] : undefined;
    if (expansion) alternatives.push(`(${expansion.split(' ').map(ftsToken).join(' AND ')})`);
    // An element symbol as written (Li, Fe) or an element name: both spellings.
    const bySymbol = /^[A-Z][a-z]?$/.test(raw) ? findElement(raw) : undefined;
    const byName = ELEMENTS.find((e) => e.name.toLowerCase() === word || e.variants.includes(word));
    const element = bySymbol ?? byName;
    if (element) {
      alternatives.push(ftsToken(element.name.toLowerCase()), ftsToken(element.symbol.toLowerCase()));
      for (const v of element.variants) alternatives.push(ftsToken(v));
    }
    groups.push({ word: raw, alternatives: [...new Set(alternatives)] });
  }
  return groups;
}

const groupExpr = (g: TermGroup) =>
  g.alternatives.length === 1 ? g.alternatives[0]! : `(${g.alternatives.join(' OR ')})`;

interface MatchedPaper {
  ordinal: number;
  score: number;
  allTerms: boolean;
}

/** Candidates read per question (best bm25 first): enough for five pages of every lens and for the evidence. */
const MATCH_CAP = 1_000;

/**
 * Title matches the looser search ranks by bm25 at most, as far as the question allows: bm25 reads
 * every title holding a word of the expression (hundreds of thousands for a common word at 1M
 * works), so the looser search reads the question's rarest words, which weigh most in bm25.
 */
const LOOSE_SCAN = 20_000;

/** The research statements, prepared once per snapshot. */
function statements(snapshot: Snapshot) {
  return snapshot.memoize('research:statements', () => {
    const db = snapshot.db;
    return {
      search: db.prepare(
        'SELECT rowid AS ordinal, bm25(papers_fts) AS score FROM papers_fts WHERE papers_fts MATCH ? ORDER BY score LIMIT ?',
      ),
      /** The best of the newest title matches (at most the given number scanned), by bm25. */
      searchNewest: db.prepare(
        'SELECT ordinal, score FROM (SELECT rowid AS ordinal, bm25(papers_fts) AS score FROM papers_fts WHERE papers_fts MATCH ? ORDER BY rowid DESC LIMIT ?) ORDER BY score LIMIT ?',
      ),
      /** Title matches of one word, counted up to LOOSE_SCAN + 1. */
      matches: db
        .prepare('SELECT count(*) FROM (SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? LIMIT ?)')
        .pluck(),
      any: db
        .prepare('SELECT count(*) FROM (SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? LIMIT 1)')
        .pluck(),
      anySubject: db
        .prepare(
          "SELECT count(*) FROM (SELECT 1 FROM subjects_fts WHERE subjects_fts MATCH ? AND type = 'topic' LIMIT 1)",
        )
        .pluck(),
      /** What the lists, the evidence and the communities read of every candidate. */
      candidates: db.prepare(
        'SELECT ordinal, year, pub_date, impact_score, cluster FROM papers WHERE ordinal IN (SELECT value FROM json_each(?))',
      ),
      candidatesWithRefs: db.prepare(
        'SELECT ordinal, year, pub_date, impact_score, cluster, refs FROM papers WHERE ordinal IN (SELECT value FROM json_each(?))',
      ),
      byDoi: db.prepare(`SELECT ${PAPER_COLUMNS} FROM papers WHERE doi = ?`),
      byTitle: db.prepare(
        `SELECT ${PAPER_COLUMNS} FROM papers WHERE ordinal = (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? ORDER BY bm25(papers_fts) LIMIT 1)`,
      ),
      describedTopics: db
        .prepare(
          "SELECT id FROM subjects_fts WHERE subjects_fts MATCH ? AND type = 'topic' ORDER BY bm25(subjects_fts, 0, 0, 5.0, 1.0) LIMIT 10",
        )
        .pluck(),
      topic: db.prepare(
        "SELECT s.id, s.name, s.description, coalesce(c.rising, 0) AS rising FROM subjects s LEFT JOIN communities c ON c.topic_id = s.id WHERE s.type = 'topic' AND s.id = ?",
      ),
      elementCommunity: db.prepare(
        'SELECT paper_count, rising FROM element_communities WHERE symbol = ? AND topic_id = ?',
      ),
    };
  });
}
type Statements = ReturnType<typeof statements>;

type Scored = { ordinal: number; score: number };

/**
 * The looser matches, when fewer than 20 titles have every word: titles with any of the words,
 * best first (bm25). The words are taken rarest first while their titles fit in LOOSE_SCAN
 * (always at least one; words are counted up to LOOSE_SCAN + 1, so beyond it the question's order
 * decides). When every word (three or more) has more matches than that, the titles with every word
 * but the last of the question come first, and are enough when they make 20 with the strict
 * matches; past them, the newest LOOSE_SCAN titles with the first word are ranked. At most
 * MATCH_CAP papers in all.
 */
function looseMatches(stmts: Statements, groups: TermGroup[], strict: MatchedPaper[]): MatchedPaper[] {
  const seen = new Set(strict.map((p) => p.ordinal));
  const room = MATCH_CAP - strict.length;
  const out: MatchedPaper[] = [];
  const add = (chosen: { g: TermGroup; i: number }[], op: 'AND' | 'OR', scanNewest = false) => {
    // In the question's order, so the expression reads as the question does.
    const expr = [...chosen]
      .sort((a, b) => a.i - b.i)
      .map((c) => groupExpr(c.g))
      .join(` ${op} `);
    const found = scanNewest
      ? stmts.searchNewest.all(expr, LOOSE_SCAN, MATCH_CAP)
      : stmts.search.all(expr, MATCH_CAP);
    for (const r of found as Scored[]) {
      if (out.length >= room) break;
      if (seen.has(r.ordinal)) continue;
      seen.add(r.ordinal);
      out.push({ ...r, allTerms: false });
    }
  };
  const counted = groups
    .map((g, i) => ({ g, i, n: stmts.matches.get(groupExpr(g), LOOSE_SCAN + 1) as number }))
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

/** Papers whose titles match: every term if any do, else any term, best first (bm25). */
function matchPapers(
  stmts: Statements,
  groups: TermGroup[],
): { papers: MatchedPaper[]; unmatched: string[] } {
  const unmatched = groups
    .filter(
      (g) =>
        (stmts.any.get(groupExpr(g)) as number) === 0 && (stmts.anySubject.get(groupExpr(g)) as number) === 0,
    )
    .map((g) => g.word);
  const usable = groups.filter((g) => !unmatched.includes(g.word));
  if (usable.length === 0) return { papers: [], unmatched };
  const all = stmts.search.all(usable.map(groupExpr).join(' AND '), MATCH_CAP) as Scored[];
  const papers: MatchedPaper[] = all.map((r) => ({ ...r, allTerms: true }));
  if (papers.length < 20 && usable.length > 1) papers.push(...looseMatches(stmts, usable, papers));
  return { papers, unmatched };
}

export interface ResearchPaper {
  title: string | null;
  doi: string | null;
  link: string;
  venue: string | null;
  year: number | null;
  citations: number | null;
  impact_score: number | null;
  reason: string;
}

export interface Community {
  subject_type: 'topic';
  subject_id: string;
  name: string;
  description: string | null;
  matching_papers: number;
  rising: boolean;
  reason: string;
  canonical_url: string;
}

export interface ElementCommunity {
  symbol: string;
  topic_id: string;
  topic_name: string;
  papers: number;
  rising: boolean;
  reason: string;
}

export interface ResearchAnswer extends Envelope {
  q: string;
  page: number;
  page_size: number;
  matched_papers: number;
  communities: Community[];
  element_communities: ElementCommunity[];
  lists: Partial<Record<Lens, ResearchPaper[]>>;
  unmatched_terms: string[];
  next: { url: string; price: { usd: number; currency: 'USD' } } | null;
}

/** What research reads of every candidate paper (the full rows only for the papers shown). */
interface CandidateRow {
  ordinal: number;
  year: number | null;
  pub_date: string | null;
  impact_score: number | null;
  cluster: number | null;
  refs?: Buffer | null;
}

function loadCandidates(stmts: Statements, ordinals: number[], withRefs: boolean): Map<number, CandidateRow> {
  const rows = (withRefs ? stmts.candidatesWithRefs : stmts.candidates).all(
    JSON.stringify(ordinals),
  ) as CandidateRow[];
  return new Map(rows.map((r) => [r.ordinal, r]));
}

/** A page of matched papers, loaded in full and each given its one-line reason. */
function showPage(
  snapshot: Snapshot,
  page: MatchedPaper[],
  reason: (m: MatchedPaper, p: PaperRow) => string,
): ResearchPaper[] {
  const shown = loadPaperRows(
    snapshot,
    page.map((m) => m.ordinal),
  );
  return page.map((m) => {
    const p = shown.get(m.ordinal)!;
    return toPaper(p, reason(m, p));
  });
}

function toPaper(p: PaperRow, reason: string): ResearchPaper {
  return {
    title: p.title,
    doi: p.doi,
    link: paperLink(p),
    venue: p.venue,
    year: p.year,
    citations: p.citations,
    impact_score: p.impact_score,
    reason,
  };
}

/** A paper given by DOI (with or without the resolver) or by title. */
function findPaper(stmts: Statements, paper: string): PaperRow {
  const doi = paper
    .trim()
    .replace(/^https?:\/\/(dx\.)?doi\.org\//i, '')
    .toLowerCase();
  let row = /^10\.\d{4,9}\//.test(doi) ? (stmts.byDoi.get(doi) as PaperRow | undefined) : undefined;
  if (!row && !/^10\.\d{4,9}\//.test(doi)) {
    const words = termGroups(paper).map((g) => ftsToken(g.word.toLowerCase()));
    if (words.length > 0) {
      row = stmts.byTitle.get(words.join(' AND ')) as PaperRow | undefined;
    }
  }
  if (!row) {
    throw new ServiceError('unknown_paper', `No paper matching '${paper}' is in the corpus.`, {
      parameter: 'paper',
    });
  }
  return row;
}

export function research(snapshot: Snapshot, request: ResearchRequest, viewer: Viewer): ResearchAnswer {
  const stmts = statements(snapshot);
  const seed = request.paper ? findPaper(stmts, request.paper) : null;
  const q = seed ? (seed.title ?? '') : (request.q ?? '');
  const groups = termGroups(q);
  const { papers: matched, unmatched } = matchPapers(stmts, groups);
  const matchedSet = new Set(matched.map((m) => m.ordinal));
  if (seed) matchedSet.delete(seed.ordinal);
  const candidates = matched.filter((m) => matchedSet.has(m.ordinal));
  if (candidates.length === 0) {
    throw new ServiceError('nothing_matched', `Nothing in the corpus matches '${q}'.`, {
      unmatched_terms: unmatched,
      suggestion: 'Use fewer or broader words, or element names rather than formulas.',
    });
  }

  const rows = loadCandidates(
    stmts,
    candidates.map((c) => c.ordinal),
    request.lenses.includes('foundational'),
  );
  const total = candidates.length;
  // Evidence (citations, communities) comes from the papers with every word when there are
  // enough of them; the looser matches only fill the lists.
  const strict = candidates.filter((m) => m.allTerms);
  const evidence = strict.length >= 10 ? strict : candidates;
  const start = (request.page - 1) * request.pageSize;
  const end = start + request.pageSize;
  const lists: Partial<Record<Lens, ResearchPaper[]>> = {};
  const cutoffYear = Number((snapshot.meta.cutoff_date ?? '0').slice(0, 4));
  const leadsFirst = (a: MatchedPaper, b: MatchedPaper) => Number(b.allTerms) - Number(a.allTerms);
  let hasMore = false;
  // Why a list came back empty, said in the notes (a client should not have to guess).
  const empty: string[] = [];
  const pastTheEnd = (lens: Lens, n: number, what: string) =>
    `${lens} is empty: its ${n} ${what} fill the pages before page ${request.page}.`;

  for (const lens of request.lenses) {
    let list: ResearchPaper[] = [];
    if (lens === 'now') {
      const impact = new Map(candidates.map((m) => [m, rows.get(m.ordinal)?.impact_score ?? -1]));
      const ordered = [...candidates].sort(
        (a, b) => leadsFirst(a, b) || impact.get(b)! - impact.get(a)! || a.score - b.score,
      );
      list = showPage(snapshot, ordered.slice(start, end), (m, p) =>
        p.impact_score === null
          ? 'matches the question; no citation data, so ranked after papers with known impact'
          : `impact score ${p.impact_score.toFixed(1)} (percentile of projected citations in its field and year)${m.allTerms ? '; its title has every word of the question' : ''}`,
      );
      hasMore ||= ordered.length > end;
      if (list.length === 0) empty.push(pastTheEnd(lens, ordered.length, 'papers'));
    } else if (lens === 'newest') {
      const recent = candidates.filter((m) => (rows.get(m.ordinal)?.year ?? 0) >= cutoffYear - 1);
      // ISO dates: code-unit order is date order (and what localeCompare gave, without ICU).
      const date = new Map(recent.map((m) => [m, rows.get(m.ordinal)?.pub_date ?? '']));
      const ordered = recent.sort((a, b) => {
        const [da, db] = [date.get(a)!, date.get(b)!];
        return leadsFirst(a, b) || (db < da ? -1 : db > da ? 1 : 0);
      });
      list = showPage(
        snapshot,
        ordered.slice(start, end),
        (_, p) => `published ${p.pub_date ?? p.year}, within the last two years of the data`,
      );
      hasMore ||= ordered.length > end;
      if (list.length === 0) {
        empty.push(
          ordered.length === 0
            ? `newest is empty: none of the ${total} papers matching this question was published in ${cutoffYear - 1} or ${cutoffYear}, the last two years of the data (cut-off ${snapshot.meta.cutoff_date}).`
            : pastTheEnd(lens, ordered.length, 'recent papers'),
        );
      }
    } else {
      // Foundational: the papers the matching papers cite most (found through their references).
      const { page: slice, distinct } = mostCited(
        [...evidence.map((m) => rows.get(m.ordinal)?.refs), seed?.refs],
        start,
        end,
      );
      const classics = loadPaperRows(
        snapshot,
        slice.map(([o]) => o),
      );
      list = slice
        .filter(([o]) => classics.has(o))
        .map(([o, n]) =>
          toPaper(classics.get(o)!, `cited by ${n} of the ${evidence.length} papers matching this question`),
        );
      hasMore ||= distinct > end;
      if (list.length === 0) {
        empty.push(
          distinct === 0
            ? `foundational is empty: the ${evidence.length} papers matching this question carry no references to papers in this corpus, so no foundational list can be drawn (it is made of the papers they cite most).`
            : pastTheEnd(lens, distinct, 'cited papers'),
        );
      }
    }
    lists[lens] = list;
  }

  const communities = matchCommunities(stmts, groups, evidence, rows, viewer);
  const elementCommunities = matchElementCommunities(stmts, q, communities);
  const nextPage = request.page + 1;
  const query = new URLSearchParams({
    ...(request.paper ? { paper: request.paper } : { q }),
    page_size: String(request.pageSize),
    lenses: request.lenses.join(','),
    page: String(nextPage),
  });
  return {
    q,
    page: request.page,
    page_size: request.pageSize,
    matched_papers: total,
    communities,
    element_communities: elementCommunities,
    lists,
    unmatched_terms: unmatched,
    next:
      hasMore && nextPage <= MAX_PAGES
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
        papers:
          `${PAPER_NOTES} Each list holds page_size papers per page, up to ${MAX_PAGES} pages. matched_papers counts ` +
          `the best-matching papers considered (at most ${MATCH_CAP}); communities and citation counts come from them.`,
        ...(empty.length > 0 ? { empty: empty.join(' ') } : {}),
      },
    ),
  };
}

/** Communities: topics whose descriptions match, and topics most of the matching papers belong to. */
function matchCommunities(
  stmts: Statements,
  groups: TermGroup[],
  candidates: MatchedPaper[],
  rows: Map<number, CandidateRow>,
  viewer: Viewer,
): Community[] {
  const byCluster = new Map<number, number>();
  for (const m of candidates) {
    const c = rows.get(m.ordinal)?.cluster;
    if (c != null) byCluster.set(c, (byCluster.get(c) ?? 0) + 1);
  }
  const described = new Set<string>();
  if (groups.length > 0) {
    const expr = groups.map(groupExpr).join(' AND ');
    for (const id of stmts.describedTopics.all(expr) as string[]) described.add(id);
  }
  const ids = new Set<string>([
    ...described,
    ...[...byCluster]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([t]) => `T${t}`),
  ]);
  const out: Community[] = [];
  for (const id of ids) {
    const row = stmts.topic.get(id) as
      | { id: string; name: string; description: string | null; rising: number }
      | undefined;
    if (!row) continue;
    const n = byCluster.get(Number(id.slice(1))) ?? 0;
    const reasons = [
      ...(n > 0 ? [`${n} of the ${candidates.length} matching papers belong to it`] : []),
      ...(described.has(id) ? ['its description matches the question'] : []),
    ];
    out.push({
      subject_type: 'topic',
      subject_id: row.id,
      name: row.name,
      description: row.description,
      matching_papers: n,
      rising: row.rising === 1,
      reason: reasons.join('; '),
      canonical_url: `${viewer.publicUrl}/subjects/topic/${row.id}`,
    });
  }
  return out
    .sort((a, b) => b.matching_papers - a.matching_papers || a.subject_id.localeCompare(b.subject_id))
    .slice(0, 10);
}

/** Element sub-communities: the question's elements inside the matched communities. */
function matchElementCommunities(stmts: Statements, q: string, communities: Community[]): ElementCommunity[] {
  const symbols = new Set(tagElements(q));
  for (const w of q.split(/[^\p{L}\p{N}]+/u)) {
    const e = /^[A-Z][a-z]?$/.test(w) ? findElement(w) : undefined;
    if (e) symbols.add(e.symbol);
  }
  if (symbols.size === 0 || communities.length === 0) return [];
  const out: ElementCommunity[] = [];
  for (const symbol of symbols) {
    for (const c of communities) {
      const row = stmts.elementCommunity.get(symbol, c.subject_id) as
        | { paper_count: number; rising: number }
        | undefined;
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

import { bm25Idf, bm25TermScore as termScore } from '../../snapshot/bm25.js';
import { type Group, PHRASE, parseExpression, quote } from '../../snapshot/fts-expression.js';
import type { ResearchQueries, ScoredPaper } from '../../snapshot/reader.js';
import type { TitleStats } from '../../snapshot/title-stats.js';
import { type Stemmer, stemmerOf } from '../../snapshot/title-terms.js';

/**
 * FTS5's bm25 over the titles, computed from the title statistics (snapshot/title-stats.ts)
 * instead of by FTS5: the same number for every title, as FTS5 computes it (sqlite's
 * fts5_aux.c: k1 1.2, b 0.75, idf = ln((N - nHit + 0.5) / (nHit + 0.5)) or 1e-6 when not above
 * 0, one term per phrase in the order the expression names them, the sum negated), and the
 * same order: by score, ties in ordinal order (FTS5's matches come in ordinal order and
 * SQLite's ORDER BY ... LIMIT keeps equal keys in the order they came). FTS5 still finds the
 * matching titles; only the ranking moves out of it.
 *
 * A phrase counts in a title when the conjunction it belongs to matches the title (that is when
 * FTS5 reports its instances), as often as the title holds it. Expressions of the shape research
 * builds are taken: groups ANDed, each group one conjunction of phrases or several ORed (the
 * looser search's OR at the top is one such group); each phrase one term. Anything else answers
 * undefined, and FTS5 ranks it.
 */

/**
 * Fewer possible matches than this (the rarest group's titles): FTS5 ranks them (0.7 us a title)
 * as fast as the statistics would, with no extra searches for a group's alternatives.
 */
const FEW_MATCHES = 5_000;

export interface RankedTitle {
  ordinal: number;
  score: number;
}

/** Ranks title matches from one snapshot's statistics. */
export class TitleRanker {
  private readonly stemmer: Stemmer;
  private readonly idfs = new Map<string, number>();
  private readonly avgdl: number;

  constructor(
    private readonly stats: TitleStats,
    /** The ordinals of the titles matching an FTS5 expression, ascending. */
    private readonly matches: (expr: string) => number[],
    /** Below this many possible matches FTS5 ranks (0 in tests: this ranks everything it takes). */
    private readonly fewMatches = FEW_MATCHES,
  ) {
    this.stemmer = stemmerOf(stats.tokenizer);
    this.avgdl = stats.totalTokens / stats.rows;
  }

  private stem(phrase: string): string | null {
    return this.stemmer.stem(phrase);
  }

  private idf(term: string): number {
    let idf = this.idfs.get(term);
    if (idf === undefined) {
      const nHit = this.stats.titlesWith.get(term) ?? 0;
      const n = this.stats.rows;
      idf = bm25Idf(this.stemmer.ln, n, nHit);
      if (this.idfs.size >= 20_000) this.idfs.clear();
      this.idfs.set(term, idf);
    }
    return idf;
  }

  /** The titles holding a phrase (its term's), as the statistics count them. */
  private titlesWith(phrase: string): number {
    return this.stats.titlesWith.get(this.stem(phrase)!) ?? 0;
  }

  /** The titles an alternative can match at most: its rarest phrase's. */
  private bound(alt: string[]): number {
    return Math.min(...alt.map((p) => this.titlesWith(p)));
  }

  /** The titles matching `expr` when it is one phrase of one term, else undefined. */
  phraseTitles(expr: string): number | undefined {
    const phrase = PHRASE.exec(expr)?.[1];
    const term = phrase === undefined ? null : this.stem(phrase);
    return term === null ? undefined : (this.stats.titlesWith.get(term) ?? 0);
  }

  /** The best `limit` matches of `expr` by bm25, or undefined when FTS5 must rank them. */
  rank(expr: string, limit: number): RankedTitle[] | undefined {
    const groups = parseExpression(expr);
    if (!groups) return undefined;
    const phrases = groups.flat(2);
    const terms = phrases.map((p) => this.stem(p));
    if (terms.some((t) => t === null)) return undefined;
    // Few matches: FTS5 ranks them as fast, without the extra searches for alternatives.
    const most = Math.min(...groups.map((g) => g.reduce((sum, alt) => sum + this.bound(alt), 0)));
    if (most < this.fewMatches) return undefined;
    const rows = this.matches(expr);
    const n = rows.length;
    // present[i]: per row, whether phrase i counts (undefined: in every row).
    const present: (Uint8Array | undefined)[] = phrases.map(() => undefined);
    let at = 0;
    groups.forEach((group, g) => {
      if (group.length > 1) {
        const rest = groups
          .filter((_, o) => o !== g)
          .map(groupText)
          .join(' AND ');
        this.markAlternatives(rest, group, rows, present, at);
      }
      at += group.flat().length;
    });
    // Each phrase's term for a title holding it once, by token count (FTS5's arithmetic, in its
    // order); the titles holding one more than once are scored term by term.
    const maxTokens = this.stats.maxTokens;
    const idf = (terms as string[]).map((t) => this.idf(t));
    const once = idf.map((w) => {
      const table = new Float64Array(maxTokens + 1);
      for (let d = 0; d <= maxTokens; d++) table[d] = termScore(w, 1, d, this.avgdl);
      return table;
    });
    const repeated = new Uint8Array(n);
    const counts = (terms as string[]).map((t) => {
      const titles = this.stats.repeats.get(t);
      if (!titles) return undefined;
      const byRow = new Map<number, number>();
      titles.ordinals.forEach((ordinal, j) => {
        const r = indexOf(rows, ordinal);
        if (r >= 0) {
          byRow.set(r, titles.counts[j]!);
          repeated[r] = 1;
        }
      });
      return byRow;
    });
    const scores = new Float64Array(n);
    const tokens = this.stats.tokens;
    const k = phrases.length;
    for (let r = 0; r < n; r++) {
      const d = tokens[rows[r]!]!;
      let score = 0;
      for (let i = 0; i < k; i++) {
        const p = present[i];
        if (p !== undefined && p[r] === 0) continue;
        const f = repeated[r] === 1 ? (counts[i]?.get(r) ?? 1) : 1;
        score += f === 1 ? once[i]![d]! : termScore(idf[i]!, f, d, this.avgdl);
      }
      scores[r] = -1.0 * score;
    }
    return best(rows, scores, limit);
  }

  /**
   * Which alternatives of a group match each row. The most common alternative is not asked for:
   * a row holds it when it holds none of the others, or when it is among the few that hold it and
   * another one too. A row matching the expression matches the other groups, so an alternative is
   * searched with those (`rest`) only, not with its own group: a rare symbol ('c', 'fe') without
   * its element's common name.
   */
  private markAlternatives(
    rest: string,
    group: Group,
    rows: number[],
    present: (Uint8Array | undefined)[],
    first: number,
  ): void {
    const starts: number[] = [];
    let at = first;
    for (const alt of group) {
      starts.push(at);
      at += alt.length;
    }
    let largest = 0;
    for (let a = 1; a < group.length; a++)
      if (this.bound(group[a]!) > this.bound(group[largest]!)) largest = a;
    const inAny = new Uint8Array(rows.length);
    const mark = (found: number[], target: Uint8Array) => {
      for (const ordinal of found) {
        const r = indexOf(rows, ordinal);
        if (r >= 0) target[r] = 1;
      }
    };
    const within = (e: string) => this.matches(rest ? `${rest} AND ${e}` : e);
    const others: string[] = [];
    group.forEach((alt, a) => {
      const flags = new Uint8Array(rows.length);
      for (let i = 0; i < alt.length; i++) present[starts[a]! + i] = flags;
      if (a === largest) return;
      others.push(quote(alt));
      const found = within(quote(alt));
      mark(found, flags);
      mark(found, inAny);
    });
    const flags = present[starts[largest]!]!;
    for (let r = 0; r < rows.length; r++) if (inAny[r] === 0) flags[r] = 1;
    mark(within(`${quote(group[largest]!)} AND (${others.join(' OR ')})`), flags);
  }
}

/** A group as an FTS5 expression. */
const groupText = (g: Group) => (g.length === 1 ? quote(g[0]!) : `(${g.map(quote).join(' OR ')})`);

/** The position of `ordinal` in the ascending `rows`, or -1. */
function indexOf(rows: number[], ordinal: number): number {
  let lo = 0;
  let hi = rows.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = rows[mid]!;
    if (v === ordinal) return mid;
    if (v < ordinal) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The k-th smallest (from 0) of `values`, which are left as they were (quickselect, three-way). */
function kthSmallest(values: Float64Array, k: number): number {
  const a = values.slice();
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1]!;
    let lt = lo;
    let gt = hi;
    let i = lo;
    while (i <= gt) {
      const v = a[i]!;
      if (v < pivot) {
        a[i++] = a[lt]!;
        a[lt++] = v;
      } else if (v > pivot) {
        a[i] = a[gt]!;
        a[gt--] = v;
      } else i++;
    }
    if (k < lt) hi = lt - 1;
    else if (k > gt) lo = gt + 1;
    else return pivot;
  }
  return a[k]!;
}

/** The `limit` lowest scores, ties in row order (rows ascend by ordinal). */
function best(rows: number[], scores: Float64Array, limit: number): RankedTitle[] {
  const n = rows.length;
  let chosen: number[];
  if (n <= limit) chosen = Array.from({ length: n }, (_, r) => r);
  else {
    // Every row below the limit-th lowest score, then the rows equal to it in row order.
    const edge = kthSmallest(scores, limit - 1);
    chosen = [];
    for (let r = 0; r < n; r++) if (scores[r]! < edge) chosen.push(r);
    for (let r = 0; r < n && chosen.length < limit; r++) if (scores[r] === edge) chosen.push(r);
  }
  chosen.sort((a, b) => scores[a]! - scores[b]! || a - b);
  return chosen.map((r) => ({ ordinal: rows[r]!, score: scores[r]! }));
}

/** What research's title searches read of a snapshot: FTS5's own answers, and the statistics. */
export type TitleQueries = Pick<
  ResearchQueries,
  'titleMatches' | 'countTitleMatches' | 'allTitleMatches' | 'titleRanking'
>;

/** Each reader's ranker, made once its statistics are read (one per snapshot and connection). */
const rankers = new WeakMap<TitleQueries, TitleRanker>();

function rankerOf(reader: TitleQueries): TitleRanker | undefined {
  let ranker = rankers.get(reader);
  if (!ranker) {
    const ranking = reader.titleRanking();
    if (!ranking) return undefined;
    ranker = new TitleRanker(ranking.stats, (expr) => reader.allTitleMatches(expr), ranking.fewMatches);
    rankers.set(reader, ranker);
  }
  return ranker;
}

/**
 * The best `limit` title matches of an FTS expression by bm25: ranked here once the snapshot's
 * statistics are read, by FTS5 until then (and for the expressions the ranker does not take).
 */
export function titleMatches(reader: TitleQueries, match: string, limit: number): ScoredPaper[] {
  return rankerOf(reader)?.rank(match, limit) ?? reader.titleMatches(match, limit);
}

/** Title matches counted up to `upTo`; one phrase is counted from the statistics when they are read. */
export function countTitleMatches(reader: TitleQueries, match: string, upTo: number): number {
  const titles = rankerOf(reader)?.phraseTitles(match);
  return titles === undefined ? reader.countTitleMatches(match, upTo) : Math.min(titles, upTo);
}

export function hasTitleMatch(reader: TitleQueries, match: string): boolean {
  return countTitleMatches(reader, match, 1) > 0;
}

import { bm25Idf, bm25TermScore as termScore } from '../../snapshot/bm25.js';
import { type Group, PHRASE, parseExpression, quote } from '../../snapshot/fts-expression.js';
import type { ResearchQueries, ScoredPaper } from '../../snapshot/reader.js';
import { REPEATS_LEFT_OUT, repeatMarker } from '../../snapshot/schema.js';
import type { TitleStats } from '../../snapshot/title-stats.js';
import { type Stemmer, stemmerOf } from '../../snapshot/title-terms.js';

/**
 * FTS5's bm25 over the titles, computed from the title statistics (snapshot/title-stats.ts)
 * instead of by FTS5: the same number for every title, as FTS5 computes it (sqlite's
 * fts5_aux.c: k1 1.2, b 0.75, idf = ln((N - nHit + 0.5) / (nHit + 0.5)) or 1e-6 when not above
 * 0, one term per phrase in the order the expression names them, the sum negated), and the
 * same order: by score, ties in ordinal order (FTS5's matches come in ordinal order and
 * SQLite's ORDER BY ... LIMIT keeps equal keys in the order they came). FTS5 still finds the
 * matching titles; only the ranking moves out of it. On a snapshot with the titles by length
 * (schema 9: papers_by_length, papers_repeats) a common question's best titles are read there,
 * shortest first, as far as they can rank (rankByLength), instead of every match: the cost goes
 * with the titles read before the limit-th best is certain, not with the corpus.
 *
 * A phrase counts in a title when the conjunction it belongs to matches the title (that is when
 * FTS5 reports its instances), as often as the title holds it. Expressions of the shape research
 * builds are taken: groups ANDed, each group one conjunction of phrases or several ORed (the
 * looser search's OR at the top is one such group); each phrase one term. Anything else answers
 * undefined, and FTS5 ranks it.
 */

/**
 * Fewer possible matches than this (the rarest group's titles): every match is ranked. Before the
 * titles by length, FTS5 ranks them (0.7 us a title) as fast as the statistics would at 1M works,
 * with no extra searches for a group's alternatives; but its bm25 passes over every title of each
 * word for the idf, which grows with the corpus.
 */
const FEW_MATCHES = 5_000;

export interface RankedTitle {
  ordinal: number;
  score: number;
}

/**
 * The titles in order of length (the snapshot's papers_by_length, schema 9): the ordinals of the
 * first `limit` (-1: every) titles of `fromTokens` to `throughTokens` tokens matching an FTS5
 * expression, shortest first, then by ordinal; with `repeated`, among the titles holding a term
 * (other than REPEATS_LEFT_OUT) more than once only.
 */
export type TitlesByLength = (
  expr: string,
  fromTokens: number,
  throughTokens: number,
  limit: number,
  repeated?: boolean,
) => number[];

/** An expression taken apart: its groups, and each phrase's term in FTS5's order. */
interface Parsed {
  expr: string;
  groups: Group[];
  terms: string[];
}

/** An alternative of a group: its phrases (by FTS5's numbering) and its search. */
interface Alternative {
  phrases: number[];
  expr: string;
}

/** One pattern of matched alternatives (see rankByLength): its phrases, search and score by length. */
interface Pattern {
  /** Each group's alternatives it matches. */
  chosen: Alternative[][];
  present: Uint8Array;
  expr: string;
  /** The bm25 of a title matching exactly this pattern, holding each term once, by token count. */
  byTokens: Float64Array;
}

/** More patterns than this (alternatives in several groups): every match is ranked instead. */
const MAX_PATTERNS = 32;

const LEFT_OUT = new Set(REPEATS_LEFT_OUT);

/** Ranks title matches from one snapshot's statistics. */
export class TitleRanker {
  private readonly stemmer: Stemmer;
  private readonly idfs = new Map<string, number>();
  private readonly timesHeldOf = new Map<string, number[]>();
  private readonly avgdl: number;
  private readonly byLength: TitlesByLength | undefined;
  private readonly newest: ((expr: string, scan: number) => number[]) | undefined;

  constructor(
    private readonly stats: TitleStats,
    /** The ordinals of the titles matching an FTS5 expression, ascending (from ordinal `from` on). */
    private readonly matches: (expr: string, from?: number) => number[],
    /** Below this many possible matches every match is ranked (0 in tests: never). */
    private readonly fewMatches = FEW_MATCHES,
    /**
     * What a snapshot with the titles by length (schema 9) has: those, for the best matches
     * without reading every one, and the newest matches (ordinals, newest first).
     */
    searches: { byLength?: TitlesByLength; newest?: (expr: string, scan: number) => number[] } = {},
  ) {
    this.byLength = searches.byLength;
    this.newest = searches.newest;
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

  /**
   * The best `limit` matches of `expr` by bm25, or undefined when FTS5 must rank them. Without the
   * titles by length (before schema 9), FTS5 ranks an expression of few possible matches.
   */
  rank(expr: string, limit: number): RankedTitle[] | undefined {
    const parsed = this.parse(expr);
    if (!parsed) return undefined;
    const most = Math.min(...parsed.groups.map((g) => g.reduce((sum, alt) => sum + this.bound(alt), 0)));
    if (!this.byLength)
      return most < this.fewMatches ? undefined : this.rankRows(parsed, this.matches(expr), limit);
    // Few matches: every one is ranked (FTS5's bm25 would pass over every title of each word for
    // its idf, whatever the matches); so are a few more when the titles by length would be
    // searched once a pattern (each costs about as much as ranking fewMatches / 2 matches: the
    // looser search's OR of four words has fifteen).
    const patterns = parsed.groups.reduce((n, g) => n * (2 ** g.length - 1), 1);
    if (most < this.fewMatches * Math.max(1, patterns / 2))
      return this.rankRows(parsed, this.matches(expr), limit);
    return (
      (this.byLength && this.rankByLength(parsed, this.byLength, limit)) ??
      this.rankRows(parsed, this.matches(expr), limit)
    );
  }

  /**
   * The best `limit` of the newest `scan` matches of `expr` by bm25, ties newest first (as SQLite
   * orders the newest scan's rows by score), or undefined when FTS5 must rank them (before the
   * titles by length).
   */
  rankNewest(expr: string, scan: number, limit: number): RankedTitle[] | undefined {
    const parsed = this.newest && this.parse(expr);
    if (!parsed) return undefined;
    const rows = this.newest!(expr, scan).reverse();
    return this.rankRows(parsed, rows, limit, true);
  }

  /** The expression taken apart, or undefined when it is not of the shape taken here. */
  private parse(expr: string): Parsed | undefined {
    const groups = parseExpression(expr);
    if (!groups) return undefined;
    const terms = groups.flat(2).map((p) => this.stem(p));
    if (terms.some((t) => t === null)) return undefined;
    return { expr, groups, terms: terms as string[] };
  }

  /** Each phrase's idf, and its part of the score of a title holding it once, by token count. */
  private weights(terms: string[]): { idf: number[]; once: Float64Array[] } {
    const maxTokens = this.stats.maxTokens;
    const idf = terms.map((t) => this.idf(t));
    const once = idf.map((w) => {
      const table = new Float64Array(maxTokens + 1);
      for (let d = 0; d <= maxTokens; d++) table[d] = termScore(w, 1, d, this.avgdl);
      return table;
    });
    return { idf, once };
  }

  /**
   * The best `limit` of `rows` (every match of the expression from the first on, ordinals
   * ascending), ties by ordinal (`newestFirst`: the larger first).
   */
  private rankRows(q: Parsed, rows: number[], limit: number, newestFirst = false): RankedTitle[] {
    const { groups, terms } = q;
    const n = rows.length;
    // present[i]: per row, whether phrase i counts (undefined: in every row).
    const present: (Uint8Array | undefined)[] = terms.map(() => undefined);
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
    const { idf, once } = this.weights(terms);
    const repeated = new Uint8Array(n);
    const counts = terms.map((t) => {
      const titles = this.stats.repeats.get(t);
      if (!titles) return undefined;
      const byRow = new Map<number, number>();
      const hold = (r: number, times: number) => {
        byRow.set(r, times);
        repeated[r] = 1;
      };
      // The shorter list is walked, the other searched by halves: a common word's repeats are
      // many more than a few rows.
      if (titles.ordinals.length <= n)
        titles.ordinals.forEach((ordinal, j) => {
          const r = indexOf(rows, ordinal);
          if (r >= 0) hold(r, titles.counts[j]!);
        });
      else
        for (let r = 0; r < n; r++) {
          const times = timesIn(titles, rows[r]!);
          if (times > 1) hold(r, times);
        }
      return byRow;
    });
    const scores = new Float64Array(n);
    const tokens = this.stats.tokens;
    const k = terms.length;
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
    return newestFirst ? best([...rows].reverse(), scores.reverse(), limit) : best(rows, scores, limit);
  }

  /**
   * The best `limit` matches from the titles by length, reading the shortest of them only.
   *
   * A title's bm25 depends on which phrases count in it (the alternatives it matches: its
   * pattern), how often it holds each term and its token count. Among the titles of one pattern
   * holding each term once it depends on the token count alone, and is no better for a longer
   * title; so those titles rank shortest first, then by ordinal, as papers_by_length holds them.
   * Each pattern's titles (the ones matching its alternatives and no other) are read in that
   * order, only as far as they can still rank: while their score is within the limit-th best
   * score met so far (first bounded by the limit-th shortest match, which scores at least as well
   * as the worst pattern would at its length), and no further than the limit-th. A title holding
   * a term of the pattern more than once scores better than its length says: those further on are
   * read from papers_repeats, the ones holding one term twice (and each other once, they score by
   * their length alone) as far as such a title can rank, and the few holding one three times or
   * more, or two of them more than once, as far as one holding each term as often as any title
   * does could. So every title that ranks is read, and scored as rankRows scores it, to the bit.
   *
   * Undefined when too many patterns would be searched, or when a phrase's term is one whose
   * repeats papers_repeats leaves out (REPEATS_LEFT_OUT).
   */
  private rankByLength(q: Parsed, byLength: TitlesByLength, limit: number): RankedTitle[] | undefined {
    if (limit <= 0) return [];
    const { groups, terms } = q;
    if (terms.some((t) => LEFT_OUT.has(t))) return undefined;
    const k = terms.length;
    const { tokens, maxTokens } = this.stats;
    const { idf, once } = this.weights(terms);
    // Each group's alternatives some title can match: their phrases, by FTS5's numbering.
    const alternatives: Alternative[][] = [];
    let at = 0;
    for (const group of groups) {
      const possible: Alternative[] = [];
      for (const alt of group) {
        const phrases = alt.map((_, j) => at + j);
        at += alt.length;
        if (phrases.every((i) => (this.stats.titlesWith.get(terms[i]!) ?? 0) > 0))
          possible.push({ phrases, expr: quote(alt) });
      }
      if (possible.length === 0) return [];
      alternatives.push(possible);
    }
    if (alternatives.reduce((n, g) => n * (2 ** g.length - 1), 1) > MAX_PATTERNS) return undefined;
    const patterns = this.patterns(alternatives, k, once);

    // How often title `o` holds each phrase's term, from the statistics (1 when not repeated).
    const repeats = terms.map((t) => this.stats.repeats.get(t));
    const score = (o: number, present: Uint8Array): number => {
      const d = tokens[o]!;
      let sum = 0;
      for (let i = 0; i < k; i++) {
        if (present[i] === 0) continue;
        const f = timesIn(repeats[i], o);
        sum += f === 1 ? once[i]![d]! : termScore(idf[i]!, f, d, this.avgdl);
      }
      return -1.0 * sum;
    };

    const found: number[] = [];
    const scores: number[] = [];
    const reached = new Set<number>();
    const add = (o: number, present: Uint8Array) => {
      if (reached.has(o)) return;
      reached.add(o);
      found.push(o);
      scores.push(score(o, present));
    };
    let threshold = Infinity;
    const tighten = () => {
      if (found.length >= limit) threshold = kthSmallest(Float64Array.from(scores), limit - 1);
    };
    /**
     * The titles of a search from `from` tokens on whose score by token count is within the
     * threshold, up to the limit-th: the ones after it score no better. Unless lengths tie in
     * score, when a title of another length may come first by ordinal: then all of them. Also
     * the token count through which every title of the search was read.
     */
    const read = (expr: string, from: number, byTokens: Float64Array, repeated: boolean) => {
      let through = lastWithin(byTokens, threshold);
      if (through < from) return { rows: [] as number[], through: from - 1 };
      // (The scores do not fall as titles lengthen: every step of the arithmetic is monotone. Were
      // they to, every title through the bound would be read.)
      let falls = false;
      for (let d = from; d < through; d++) if (byTokens[d + 1]! < byTokens[d]!) falls = true;
      let rows = byLength(expr, from, through, falls ? -1 : limit, repeated);
      if (rows.length === limit && !falls) {
        const last = tokens[rows.at(-1)!]!;
        const s = byTokens[last]!;
        let lo = last;
        let hi = last;
        while (lo > from && byTokens[lo - 1] === s) lo--;
        while (hi < maxTokens && byTokens[hi + 1] === s) hi++;
        if (lo < last || hi > last) {
          rows = byLength(expr, from, hi, -1, repeated);
          through = hi;
        } else through = last - 1;
      }
      return { rows, through };
    };

    // The common pattern first (each group's most common alternative alone): its limit-th title
    // bounds the rest. Then the others, best first: their few titles tighten the bound further.
    const titles = (alt: { phrases: number[] }) =>
      Math.min(...alt.phrases.map((i) => this.stats.titlesWith.get(terms[i]!) ?? 0));
    const common = alternatives.map((g) => g.reduce((a, b) => (titles(b) > titles(a) ? b : a)));
    const main = patterns.findIndex((pattern) =>
      alternatives.every((g, gi) =>
        g.every((alt) => pattern.chosen[gi]!.includes(alt) === (alt === common[gi])),
      ),
    );
    const readThrough = new Map<Pattern, number>();
    const readPattern = (pattern: Pattern) => {
      const { rows, through } = read(pattern.expr, 0, pattern.byTokens, false);
      for (const o of rows) add(o, pattern.present);
      tighten();
      readThrough.set(pattern, through);
    };
    readPattern(patterns[main]!);
    if (found.length < limit && patterns.length > 1) {
      // Fewer than the limit: the expression may have few matches in all. Its limit-th shortest
      // title bounds the rest: the titles up to it score at least as well as the worst pattern
      // would at its length.
      const shortest = byLength(q.expr, 0, maxTokens, limit);
      if (shortest.length < limit) return this.rankRows(q, shortest.sort(ascending), limit);
      const d = tokens[shortest.at(-1)!]!;
      threshold = Math.min(threshold, Math.max(...patterns.map((p) => p.byTokens[d]!)));
    }
    const next = Math.min(readThrough.get(patterns[main]!)! + 1, maxTokens);
    const rest = patterns.filter((_, p) => p !== main).sort((a, b) => a.byTokens[next]! - b.byTokens[next]!);
    for (const pattern of rest) readPattern(pattern);

    // Further on, the titles holding a term of the pattern more than once (papers_repeats): those
    // holding one of its terms twice (each other once, they score by their token count alone) as
    // far as one holding the term they hold twice could rank; the few holding one three times or
    // more, or two of them more than once, as far as one holding every term as often as any title
    // does could.
    for (const pattern of patterns) {
      const from = readThrough.get(pattern)! + 1;
      if (from > maxTokens) continue;
      const repeated = [
        ...new Set(terms.filter((t, i) => pattern.present[i] === 1 && this.stats.repeats.has(t))),
      ];
      const inPattern = `{title} : (${pattern.expr})`;
      const search = (markers: string[], through: number) => {
        if (markers.length === 0 || through < from) return;
        for (const o of byLength(
          `${inPattern} AND {repeated} : (${markers.join(' OR ')})`,
          from,
          through,
          -1,
          true,
        ))
          add(o, pattern.present);
      };
      const twice = repeated.filter((t) => this.timesHeld(t).includes(2));
      const holding = (t: string, times: number) =>
        terms.map((u, i) => (pattern.present[i] === 0 ? 0 : u === t ? times : 1));
      search(
        twice.map((t) => `"${repeatMarker(t, 2)}"`),
        Math.max(-1, ...twice.map((t) => lastWithin(this.byTokens(idf, holding(t, 2)), threshold))),
      );
      const most = terms.map((t, i) => (pattern.present[i] === 0 ? 0 : (this.timesHeld(t).at(-1) ?? 1)));
      search(
        [
          ...repeated.flatMap((t) =>
            this.timesHeld(t)
              .filter((c) => c > 2)
              .map((c) => `"${repeatMarker(t, c)}"`),
          ),
          ...repeated.flatMap((t, a) =>
            repeated.slice(a + 1).map((u) => `("${repeatMarker(t)}" AND "${repeatMarker(u)}")`),
          ),
        ],
        lastWithin(this.byTokens(idf, most), threshold),
      );
    }
    const order = found.map((_, j) => j);
    order.sort((a, b) => scores[a]! - scores[b]! || found[a]! - found[b]!);
    return order.slice(0, limit).map((j) => ({ ordinal: found[j]!, score: scores[j]! }));
  }

  /** The score of a title holding phrase i's term f[i] times (0: not counting), by token count. */
  private byTokens(idf: number[], f: number[]): Float64Array {
    const out = new Float64Array(this.stats.maxTokens + 1);
    for (let d = 0; d < out.length; d++) {
      let sum = 0;
      for (let i = 0; i < f.length; i++) if (f[i]! > 0) sum += termScore(idf[i]!, f[i]!, d, this.avgdl);
      out[d] = -1.0 * sum;
    }
    return out;
  }

  /** How many times the titles holding a term more than once hold it, ascending (none: empty). */
  private timesHeld(term: string): number[] {
    let times = this.timesHeldOf.get(term);
    if (times === undefined) {
      times = [...new Set(this.stats.repeats.get(term)?.counts ?? [])].sort(ascending);
      if (this.timesHeldOf.size >= 20_000) this.timesHeldOf.clear();
      this.timesHeldOf.set(term, times);
    }
    return times;
  }

  /**
   * Every pattern of matched alternatives (at least one a group), with its search in the titles
   * by length (its alternatives, and none of the others) and its scores by token count.
   */
  private patterns(alternatives: Alternative[][], k: number, once: Float64Array[]): Pattern[] {
    const maxTokens = this.stats.maxTokens;
    // Each group's nonempty subsets of its alternatives, as bit masks, for every group at once.
    let masks: number[][] = [[]];
    for (const g of alternatives) {
      const next: number[][] = [];
      for (const m of masks) for (let mask = 1; mask < 2 ** g.length; mask++) next.push([...m, mask]);
      masks = next;
    }
    const out: Pattern[] = [];
    for (const mask of masks) {
      const present = new Uint8Array(k);
      const chosen = alternatives.map((g, gi) => g.filter((_, a) => mask[gi]! & (1 << a)));
      const inside: string[] = [];
      const outside: string[] = [];
      for (const [gi, g] of alternatives.entries())
        for (const alt of g) {
          if (chosen[gi]!.includes(alt)) {
            inside.push(alt.expr);
            for (const i of alt.phrases) present[i] = 1;
          } else outside.push(alt.expr);
        }
      const byTokens = new Float64Array(maxTokens + 1);
      for (let d = 0; d <= maxTokens; d++) {
        let sum = 0;
        for (let i = 0; i < k; i++) if (present[i] === 1) sum += once[i]![d]!;
        byTokens[d] = -1.0 * sum;
      }
      const all = inside.join(' AND ');
      const expr = outside.length === 0 ? all : `(${all}) NOT (${outside.join(' OR ')})`;
      out.push({ chosen, present, expr, byTokens });
    }
    return out;
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
    const within = (e: string) => this.matches(rest ? `${rest} AND ${e}` : e, rows[0] ?? 0);
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

/** How often title `o` holds a term, from the titles holding it more than once (ordinals ascending): else 1. */
function timesIn(titles: { ordinals: Int32Array; counts: Uint16Array } | undefined, o: number): number {
  if (!titles) return 1;
  const { ordinals } = titles;
  let lo = 0;
  let hi = ordinals.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = ordinals[mid]!;
    if (v === o) return titles.counts[mid]!;
    if (v < o) lo = mid + 1;
    else hi = mid - 1;
  }
  return 1;
}

const ascending = (a: number, b: number) => a - b;

/** The last token count whose score is within `threshold`, or -1. */
function lastWithin(byTokens: Float64Array, threshold: number): number {
  for (let d = byTokens.length - 1; d >= 0; d--) if (byTokens[d]! <= threshold) return d;
  return -1;
}

/** The `limit` lowest scores, ties in row order. */
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
  | 'titleMatches'
  | 'countTitleMatches'
  | 'allTitleMatches'
  | 'titleRanking'
  | 'hasTitlesByLength'
  | 'titlesByLength'
  | 'newestTitleMatches'
  | 'newestTitleOrdinals'
>;

/** Each reader's ranker, made once its statistics are read (one per snapshot and connection). */
const rankers = new WeakMap<TitleQueries, TitleRanker>();

function rankerOf(reader: TitleQueries): TitleRanker | undefined {
  let ranker = rankers.get(reader);
  if (!ranker) {
    const ranking = reader.titleRanking();
    if (!ranking) return undefined;
    ranker = new TitleRanker(
      ranking.stats,
      (expr, from) => reader.allTitleMatches(expr, from),
      ranking.fewMatches,
      reader.hasTitlesByLength()
        ? {
            byLength: (...args) => reader.titlesByLength(...args),
            newest: (expr, scan) => reader.newestTitleOrdinals(expr, scan),
          }
        : {},
    );
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

/** The best `limit` of the newest `scan` title matches by bm25, ranked here as titleMatches ranks. */
export function newestTitleMatches(
  reader: TitleQueries,
  match: string,
  scan: number,
  limit: number,
): ScoredPaper[] {
  return rankerOf(reader)?.rankNewest(match, scan, limit) ?? reader.newestTitleMatches(match, scan, limit);
}

/** Title matches counted up to `upTo`; one phrase is counted from the statistics when they are read. */
export function countTitleMatches(reader: TitleQueries, match: string, upTo: number): number {
  const titles = rankerOf(reader)?.phraseTitles(match);
  return titles === undefined ? reader.countTitleMatches(match, upTo) : Math.min(titles, upTo);
}

export function hasTitleMatch(reader: TitleQueries, match: string): boolean {
  return countTitleMatches(reader, match, 1) > 0;
}

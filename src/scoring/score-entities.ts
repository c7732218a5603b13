import { ELEMENTS } from '../elements/elements.js';
import { getOrCreate } from '../util/maps.js';
import { type Corpus, type Csr, NO_DAY } from './corpus.js';
import { civilFromDays, monthEndDay, monthIndexOfDay, monthsBefore, yearEndDay } from './dates.js';
import { doiOrder } from './doi-order.js';
import { NO_PERIOD, type PeriodSums, sumEntities } from './entity-sums.js';
import { fractionalWeight, recencyWeight, researchIntensity, researchIntensityScore } from './formulas.js';
import { PERIOD_LABEL, SeriesWriter } from './history-codec.js';
import { type PaperImpact, round } from './impact.js';
import { DAYS_PER_YEAR, type ScoringParameters } from './parameters.js';
import { RESOLUTIONS, type Resolution } from './resolutions.js';
import type { ScoringContext, Window } from './scoring-context.js';

export type SubjectType = 'element' | 'topic' | 'keyword';

/** An entity's top papers, best first: ordinals and each one's ris_contribution (no object per paper). */
interface RankedPapers {
  ordinals: Int32Array;
  contributions: Float64Array;
}

export interface EntityScore {
  type: SubjectType;
  /** Index within its type: element index, topic id, keyword index. */
  key: number;
  paperCount: number;
  windowPapers: number;
  ri: number;
  ris: number;
  hri: number | null;
  ranked: RankedPapers;
  /**
   * Per resolution, the series (RI, RIS, HRI and papers of each period with papers, as at that
   * period alone), encoded as the snapshot stores it (history-codec.ts).
   */
  history: Partial<Record<Resolution, Uint8Array>>;
  /** Topics and keywords: the elements their papers are routed to, with shares summing to 1. */
  routedElements: { element: number; share: number }[];
}

export interface PeriodTotals {
  resolution: Resolution;
  period: string;
  papers: number;
  highImpactPapers: number;
}

/** Entity -> papers (ordinals ascending, so date ascending), with each paper's weight for it. */
export function invert(csr: Csr, n: number, entities: number): { start: Int32Array; papers: Int32Array } {
  const count = new Int32Array(entities + 1);
  for (let i = 0; i < csr.values.length; i++) count[csr.values[i]! + 1]!++;
  for (let e = 0; e < entities; e++) count[e + 1]! += count[e]!;
  const fill = count.slice(0, entities);
  const papers = new Int32Array(csr.values.length);
  for (let p = 0; p < n; p++) {
    for (let i = csr.start[p]!; i < csr.start[p + 1]!; i++) papers[fill[csr.values[i]!]!++] = p;
  }
  return { start: count, papers };
}

/**
 * compareForRanking over paper ordinals, reading the corpus columns directly (no object per
 * comparison: it runs ~20 million times at a million papers). A test checks it against the rule.
 */
export function paperComparator(corpus: Corpus, impact: PaperImpact): (a: number, b: number) => number {
  const { citations, doiRank, day, workId } = corpus;
  const score = impact.impactScore;
  return (a, b) => {
    const ca = citations[a]!;
    const cb = citations[b]!;
    const aKnown = ca >= 0;
    if (aKnown !== cb >= 0) return aKnown ? -1 : 1;
    if (aKnown) {
      const sa = Number.isNaN(score[a]!) ? -1 : score[a]!;
      const sb = Number.isNaN(score[b]!) ? -1 : score[b]!;
      if (sa !== sb) return sb - sa;
      if (ca !== cb) return cb - ca;
    } else {
      const da = day[a]!;
      const db = day[b]!;
      if (da !== db) return db - da; // NO_DAY is the smallest int32: unknown dates go last
    }
    if (doiRank[a] !== doiRank[b]) return doiRank[a]! - doiRank[b]!;
    return workId[a]! - workId[b]!;
  };
}

/**
 * Orders all papers once by the ranking rule (paperComparator); an entity's top papers are its
 * lowest positions. Each part of the rule becomes a dense rank, packed into one float64 key per
 * paper (exact below 2^53), so a typed-array sort does what a million comparator calls did (1.2 s
 * of the scoring at 1M works); a corpus whose ranks do not fit (`maxKey`) is sorted by the comparator.
 */
export function globalRankPositions(corpus: Corpus, impact: PaperImpact, maxKey = 2 ** 53): Int32Array {
  const n = corpus.n;
  const { citations, day } = corpus;
  const score = impact.impactScore;
  const position = new Int32Array(n);
  // The last ties: DOI rank, work id, then ordinal (as the stable sort of the comparator left them).
  const tieOrder = tieBreakOrder(corpus);
  const tie = new Int32Array(n);
  for (let i = 0; i < n; i++) tie[tieOrder[i]!] = i;
  let knownCount = 0;
  for (let p = 0; p < n; p++) if (citations[p]! >= 0) knownCount++;
  const known = new Int32Array(knownCount);
  const unknown = new Int32Array(n - knownCount);
  const impactOf = new Float64Array(knownCount);
  const citationsOf = new Float64Array(knownCount);
  const dayOf = new Float64Array(n - knownCount);
  for (let p = 0, k = 0, u = 0; p < n; p++) {
    if (citations[p]! >= 0) {
      known[k] = p;
      impactOf[k] = Number.isNaN(score[p]!) ? -1 : score[p]!;
      citationsOf[k++] = citations[p]!;
    } else {
      unknown[u] = p;
      dayOf[u++] = day[p]!;
    }
  }
  // Known citations first: impact score, then citations, both descending; unknown: date descending.
  const impactRank = descendingRanks(impactOf, 100); // scores are kept in hundredths
  const citationRank = descendingRanks(citationsOf);
  const dayRank = descendingRanks(dayOf);
  if (impactRank.count * citationRank.count * n >= maxKey || dayRank.count * n >= maxKey) {
    const order = Array.from({ length: n }, (_, p) => p).sort(paperComparator(corpus, impact));
    order.forEach((p, i) => {
      position[p] = i;
    });
    return position;
  }
  const keys = new Float64Array(n);
  for (let k = 0; k < knownCount; k++)
    keys[k] = (impactRank.rank[k]! * citationRank.count + citationRank.rank[k]!) * n + tie[known[k]!]!;
  for (let u = 0; u < unknown.length; u++) keys[knownCount + u] = dayRank.rank[u]! * n + tie[unknown[u]!]!;
  keys.subarray(0, knownCount).sort();
  keys.subarray(knownCount).sort();
  for (let i = 0; i < n; i++) position[tieOrder[keys[i]! % n]!] = i;
  return position;
}

/** Ordinals by DOI rank, then work id, then ordinal (DOI order; papers of one rank by id). */
function tieBreakOrder(corpus: Corpus): Int32Array {
  const { n, doiRank, workId } = corpus;
  const order = doiOrder(corpus);
  for (let i = 0; i < n; ) {
    let j = i + 1;
    while (j < n && doiRank[order[j]!] === doiRank[order[i]!]) j++;
    if (j - i > 1) order.subarray(i, j).sort((a, b) => workId[a]! - workId[b]! || a - b);
    i = j;
  }
  return order;
}

/**
 * Each value's rank among the distinct values, largest first (0 the largest), and how many there
 * are. Values that are whole numbers of 1/`scale` (impact scores in hundredths, citations, days)
 * are ranked by a table over their range when it is small; others by a sort and a search.
 */
export function descendingRanks(values: Float64Array, scale = 1): { count: number; rank: Int32Array } {
  return tableRanks(values, scale) ?? sortedRanks(values);
}

/**
 * descendingRanks through a table indexed by value (at 1M works, three sorts of up to a million
 * values and a search per value took 0.27 s of the writer's thread), or null when some value is
 * not a whole number of 1/`scale` or their range is much wider than their count.
 */
function tableRanks(values: Float64Array, scale: number): { count: number; rank: Int32Array } | null {
  const n = values.length;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const k = Math.round(values[i]! * scale);
    if (k / scale !== values[i]) return null; // also NaN
    if (k < min) min = k;
    if (k > max) max = k;
  }
  if (n === 0 || max - min > 4 * n + 1024) return null;
  const table = new Int32Array(max - min + 1);
  for (let i = 0; i < n; i++) table[Math.round(values[i]! * scale) - min] = 1;
  let count = 0;
  for (let j = table.length - 1; j >= 0; j--) if (table[j]) table[j] = ++count;
  const rank = new Int32Array(n);
  for (let i = 0; i < n; i++) rank[i] = table[Math.round(values[i]! * scale) - min]! - 1;
  return { count, rank };
}

function sortedRanks(values: Float64Array): { count: number; rank: Int32Array } {
  const distinct = Float64Array.from(values).sort().reverse();
  let count = 0;
  for (let i = 0; i < distinct.length; i++)
    if (i === 0 || distinct[i] !== distinct[count - 1]) distinct[count++] = distinct[i]!;
  const rank = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    let lo = 0;
    let hi = count - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (distinct[mid]! > v) lo = mid + 1;
      else hi = mid;
    }
    rank[i] = lo;
  }
  return { count, rank };
}

const PERIOD_END: Record<Resolution, (k: number) => number> = {
  yearly: yearEndDay,
  monthly: monthEndDay,
  daily: (d) => d,
};

/**
 * The scoring's per-paper facts. The ranking positions are computed when first read, or taken from
 * `rankPositions` (the build computes them on its other thread while this one starts scoring).
 */
export function buildContext(
  corpus: Corpus,
  impact: PaperImpact,
  params: ScoringParameters,
  rankPositions: () => Int32Array = () => globalRankPositions(corpus, impact),
): ScoringContext {
  const n = corpus.n;
  const cutoff = corpus.cutoffDay;
  const startDay = monthsBefore(cutoff, params.currentWindowMonths);
  const window: Window = { startDay, endDay: cutoff, papers: 0, highImpactPapers: 0 };
  const totals: ScoringContext['totals'] = { yearly: new Map(), monthly: new Map(), daily: new Map() };
  const periodKey = {
    yearly: new Int32Array(n).fill(NO_PERIOD),
    monthly: new Int32Array(n).fill(NO_PERIOD),
    daily: new Int32Array(n).fill(NO_PERIOD),
  };
  const periodRecency = {
    yearly: new Float64Array(n),
    monthly: new Float64Array(n),
    daily: new Float64Array(n),
  };
  const recencyNow = new Float64Array(n);
  const inWindow = new Uint8Array(n);
  const endOf = {
    yearly: new Map<number, number>(),
    monthly: new Map<number, number>(),
    daily: new Map<number, number>(),
  };
  const decay = (ageDays: number) => recencyWeight(ageDays / DAYS_PER_YEAR, params.risDecayYears);

  for (let p = 0; p < n; p++) {
    const d = corpus.ageDay[p]!;
    const exact = corpus.day[p]!;
    const high = impact.highImpact[p]!;
    if (d !== NO_DAY) {
      recencyNow[p] = decay(cutoff - d);
      if (d > startDay && d <= cutoff) {
        inWindow[p] = 1;
        window.papers++;
        window.highImpactPapers += high;
      }
    }
    // The year of the exact date where there is one, so keys follow ordinal (date) order.
    periodKey.yearly[p] = exact !== NO_DAY ? civilFromDays(exact).year : corpus.year[p] || NO_PERIOD;
    if (exact !== NO_DAY) {
      periodKey.monthly[p] = monthIndexOfDay(exact);
      periodKey.daily[p] = exact;
    }
    for (const r of RESOLUTIONS) {
      const k = periodKey[r][p]!;
      if (k === NO_PERIOD) continue;
      const end = getOrCreate(endOf[r], k, () => Math.min(PERIOD_END[r](k), cutoff));
      periodRecency[r][p] = d === NO_DAY ? 1 : decay(end - d);
      const t = totals[r].get(k);
      if (t) {
        t.papers++;
        t.high += high;
      } else totals[r].set(k, { papers: 1, high });
    }
  }
  let rankPosition: Int32Array | undefined;
  let rankOrder: Int32Array | undefined;
  return {
    corpus,
    impact,
    params,
    get rankPosition() {
      rankPosition ??= rankPositions();
      return rankPosition;
    },
    get rankOrder() {
      rankOrder ??= rankOrderOf(this.rankPosition);
      return rankOrder;
    },
    window,
    totals,
    periodKey,
    periodRecency,
    recencyNow,
    inWindow,
  };
}

export function periodTotals(ctx: ScoringContext): PeriodTotals[] {
  const out: PeriodTotals[] = [];
  for (const r of RESOLUTIONS) {
    for (const k of [...ctx.totals[r].keys()].sort((a, b) => a - b)) {
      const t = ctx.totals[r].get(k)!;
      out.push({ resolution: r, period: PERIOD_LABEL[r](k), papers: t.papers, highImpactPapers: t.high });
    }
  }
  return out;
}

/**
 * Scores every entity of one type: current RI, HRI and RIS; history at the given resolutions;
 * the top ranked papers with their ris_contribution; and, for subjects, the routed elements.
 */
export function scoreEntities(
  ctx: ScoringContext,
  type: SubjectType,
  csr: Csr,
  keys: readonly number[],
  resolutions: readonly Resolution[],
  inverted = invert(csr, ctx.corpus.n, keys.length),
): EntityScore[] {
  const { params, window } = ctx;
  const scores: EntityScore[] = [];
  // The tables of the periods, whose largest RIS sum per period (of this type) fills as entities are summed.
  const tables = resolutions.map((res) => periodTable(ctx, res));
  const pending: { score: EntityScore; runs: PeriodSums[] }[] = [];
  const writer = new SeriesWriter();
  const routes = type !== 'element';
  const sums = sumEntities(ctx, csr, keys.length, resolutions, routes, inverted);
  const limit = params.rankedPapersPerEntity;
  const top = topPapers(csr, keys.length, ctx.rankOrder, limit);
  const elementCount = ELEMENTS.length;

  for (let e = 0; e < keys.length; e++) {
    const from = inverted.start[e]!;
    const to = inverted.start[e + 1]!;
    const runs = resolutions.map((_, j) => {
      const run = sums.periods(e, j);
      const { first, maxRaw } = tables[j]!;
      for (let i = 0; i < run.keys.length; i++) {
        const at = run.keys[i]! - first;
        if (run.raw[i]! > maxRaw[at]!) maxRaw[at] = run.raw[i]!;
      }
      return run;
    });
    const raw = sums.raw[e]!;
    const score: EntityScore = {
      type,
      key: keys[e]!,
      paperCount: to - from,
      windowPapers: sums.windowPapers[e]!,
      ri: researchIntensity(sums.windowWeight[e]!, window.papers),
      ris: raw, // normalised below, once the type's maximum is known
      hri:
        window.highImpactPapers > 0 ? researchIntensity(sums.windowHigh[e]!, window.highImpactPapers) : null,
      ranked: rankedOf(ctx, csr, top, limit, e, raw),
      history: {},
      routedElements: sums.share
        ? routed(
            sums.share.subarray(e * elementCount, (e + 1) * elementCount),
            params.routedElementsPerSubject,
          )
        : [],
    };
    scores.push(score);
    pending.push({ score, runs });
  }

  const maxRaw = scores.reduce((m, s) => Math.max(m, s.ris), 0);
  for (const { score, runs } of pending) {
    score.ris = round(researchIntensityScore(score.ris, maxRaw), 4);
    score.ri = round(score.ri, 4);
    score.hri = score.hri === null ? null : round(score.hri, 4);
    resolutions.forEach((res, j) => {
      score.history[res] = series(tables[j]!, runs[j]!, writer);
    });
  }
  return scores;
}

/**
 * What a history series reads of each period of one resolution, by key (dense from the smallest
 * key: a series reads it once per period, millions of times a build at 1M works): the corpus's
 * papers and high-impact papers in it, and the type's largest RIS sum in it (filled as the type's
 * entities are summed).
 */
interface PeriodTable {
  first: number;
  papers: Float64Array;
  high: Float64Array;
  maxRaw: Float64Array;
}

function periodTable(ctx: ScoringContext, res: Resolution): PeriodTable {
  const totals = ctx.totals[res];
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const k of totals.keys()) {
    first = Math.min(first, k);
    last = Math.max(last, k);
  }
  const size = totals.size === 0 ? 0 : last - first + 1;
  const table: PeriodTable = {
    first,
    papers: new Float64Array(size),
    high: new Float64Array(size),
    maxRaw: new Float64Array(size),
  };
  for (const [k, t] of totals) {
    table.papers[k - first] = t.papers;
    table.high[k - first] = t.high;
  }
  return table;
}

function series(table: PeriodTable, run: PeriodSums, writer: SeriesWriter): Uint8Array {
  const keys = run.keys;
  // Keys come in date order (papers do): sorted only when a date the store could not parse broke it.
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = keys[i - 1]! < keys[i]!;
  const order = sorted ? null : Array.from(keys, (_, i) => i).sort((a, b) => keys[a]! - keys[b]!);
  const out = writer.take(keys.length);
  for (let j = 0; j < keys.length; j++) {
    const i = order ? order[j]! : j;
    const at = keys[i]! - table.first;
    const high = table.high[at]!;
    out.key[j] = keys[i]!;
    out.papers[j] = run.papers[i]!;
    out.ri[j] = round(researchIntensity(run.weight[i]!, table.papers[at]!), 4);
    out.ris[j] = round(researchIntensityScore(run.raw[i]!, table.maxRaw[at]!), 4);
    out.hri[j] = high > 0 ? round(researchIntensity(run.high[i]!, high), 4) : Number.NaN;
  }
  return out.bytes;
}

/**
 * Every entity's top papers by the global ranking order (at most `limit` each, best first): one
 * pass over the papers in that order, each paper given to its entities until they hold `limit`.
 * Entity e's are papers[e * limit .. e * limit + count[e]). A selection over each entity's own
 * papers by their positions read the ranking at random once per paper and entity (9M reads at
 * 1M works, most of them cache misses); here the ranking is read in order, and each paper's
 * entities once.
 */
export function topPapers(
  csr: Csr,
  entities: number,
  rankOrder: Int32Array,
  limit: number,
): { papers: Int32Array; count: Int32Array } {
  const papers = new Int32Array(entities * limit);
  const count = new Int32Array(entities);
  const { start, values } = csr;
  for (let r = 0; r < rankOrder.length; r++) {
    const p = rankOrder[r]!;
    for (let i = start[p]!; i < start[p + 1]!; i++) {
      const e = values[i]!;
      const c = count[e]!;
      if (c < limit) {
        papers[e * limit + c] = p;
        count[e] = c + 1;
      }
    }
  }
  return { papers, count };
}

/** The ordinals in the global ranking order: the inverse of the ranking positions. */
function rankOrderOf(rankPosition: Int32Array): Int32Array {
  const order = new Int32Array(rankPosition.length);
  for (let p = 0; p < rankPosition.length; p++) order[rankPosition[p]!] = p;
  return order;
}

/** Entity e's ranked papers (topPapers') with each one's share of its RIS sum `raw`. */
function rankedOf(
  ctx: ScoringContext,
  csr: Csr,
  top: { papers: Int32Array; count: Int32Array },
  limit: number,
  e: number,
  raw: number,
): RankedPapers {
  const ordinals = top.papers.slice(e * limit, e * limit + top.count[e]!);
  const contributions = new Float64Array(ordinals.length);
  const recencyNow = ctx.recencyNow;
  for (let r = 0; r < ordinals.length; r++) {
    const p = ordinals[r]!;
    // The paper's RIS term, as summed into raw (sumEntities).
    const term = fractionalWeight(csr.start[p + 1]! - csr.start[p]!) * recencyNow[p]!;
    contributions[r] = raw > 0 ? round(term / raw, 8) : 0;
  }
  return { ordinals, contributions };
}

function routed(shares: Float64Array, limit: number): { element: number; share: number }[] {
  // Plain loops: this runs for every subject over all 118 elements, most of them 0.
  let total = 0;
  for (let element = 0; element < shares.length; element++) total += shares[element]!;
  if (total === 0) return [];
  const list: { element: number; share: number }[] = [];
  for (let element = 0; element < shares.length; element++) {
    const s = shares[element]!;
    if (s > 0) list.push({ element, share: s / total });
  }
  list.sort((a, b) => b.share - a.share || a.element - b.element);
  return list.slice(0, limit).map((x) => ({ element: x.element, share: round(x.share, 6) }));
}

import { ELEMENTS } from '../tagging/elements.js';
import { type Corpus, type Csr, NO_DAY } from './corpus.js';
import { isoDay, monthEndDay, monthIndexOfDay, monthLabel, monthsBefore, yearEndDay } from './dates.js';
import {
  fractionalWeight,
  recencyWeight,
  researchIntensity,
  researchIntensityScore,
} from './formulas.js';
import { type PaperImpact, round } from './impact.js';
import { DAYS_PER_YEAR, type ScoringParameters } from './parameters.js';

export type SubjectType = 'element' | 'topic' | 'keyword';
export type Resolution = 'yearly' | 'monthly' | 'daily';

/** One period of a history series: RI, RIS, HRI as at that period alone. */
export interface HistorySeries {
  period: string[];
  papers: number[];
  ri: number[];
  ris: number[];
  /** null where the period has no high-impact papers (no citation data). */
  hri: (number | null)[];
}

export interface RankedPaper {
  ordinal: number;
  risContribution: number;
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
  ranked: RankedPaper[];
  history: Partial<Record<Resolution, HistorySeries>>;
  /** Topics and keywords: the elements their papers are routed to, with shares summing to 1. */
  routedElements: { element: number; share: number }[];
}

export interface PeriodTotals {
  resolution: Resolution;
  period: string;
  papers: number;
  highImpactPapers: number;
}

export interface Window {
  startDay: number; // exclusive
  endDay: number; // inclusive
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

/** Orders all papers once by the ranking rule; an entity's top papers are its lowest positions. */
export function globalRankPositions(corpus: Corpus, impact: PaperImpact): Int32Array {
  const order = Array.from({ length: corpus.n }, (_, p) => p).sort(paperComparator(corpus, impact));
  const position = new Int32Array(corpus.n);
  order.forEach((p, i) => {
    position[p] = i;
  });
  return position;
}

/** The shared facts every entity type is scored against. */
export interface ScoringContext {
  corpus: Corpus;
  impact: PaperImpact;
  params: ScoringParameters;
  rankPosition: Int32Array;
  window: Window;
  /** Corpus papers (and high-impact papers) per period, by resolution. */
  totals: Record<Resolution, Map<number, { papers: number; high: number }>>;
}

function periodKeys(corpus: Corpus, p: number): Record<Resolution, number | null> {
  const day = corpus.day[p]!;
  const year = corpus.year[p]!;
  return {
    yearly: year !== 0 ? year : null,
    monthly: day !== NO_DAY ? monthIndexOfDay(day) : null,
    daily: day !== NO_DAY ? day : null,
  };
}

const PERIOD_END: Record<Resolution, (k: number) => number> = {
  yearly: yearEndDay,
  monthly: monthEndDay,
  daily: (d) => d,
};
const PERIOD_LABEL: Record<Resolution, (k: number) => string> = {
  yearly: (y) => String(y),
  monthly: monthLabel,
  daily: isoDay,
};

export function buildContext(corpus: Corpus, impact: PaperImpact, params: ScoringParameters): ScoringContext {
  const startDay = monthsBefore(corpus.cutoffDay, params.currentWindowMonths);
  const window: Window = { startDay, endDay: corpus.cutoffDay, papers: 0, highImpactPapers: 0 };
  const totals: ScoringContext['totals'] = { yearly: new Map(), monthly: new Map(), daily: new Map() };
  for (let p = 0; p < corpus.n; p++) {
    const d = corpus.ageDay[p]!;
    const high = impact.highImpact[p]!;
    if (d !== NO_DAY && d > startDay && d <= corpus.cutoffDay) {
      window.papers++;
      window.highImpactPapers += high;
    }
    const keys = periodKeys(corpus, p);
    for (const r of ['yearly', 'monthly', 'daily'] as const) {
      const k = keys[r];
      if (k === null) continue;
      const t = totals[r].get(k);
      if (t) {
        t.papers++;
        t.high += high;
      } else totals[r].set(k, { papers: 1, high });
    }
  }
  return { corpus, impact, params, rankPosition: globalRankPositions(corpus, impact), window, totals };
}

export function periodTotals(ctx: ScoringContext): PeriodTotals[] {
  const out: PeriodTotals[] = [];
  for (const r of ['yearly', 'monthly', 'daily'] as const) {
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
): EntityScore[] {
  const { corpus, impact, params, window } = ctx;
  const inverted = invert(csr, corpus.n, keys.length);
  const cutoff = corpus.cutoffDay;
  const scores: EntityScore[] = [];
  const periodRaws: Record<Resolution, Map<number, number>> = { yearly: new Map(), monthly: new Map(), daily: new Map() };
  const pending: { score: EntityScore; periods: Record<Resolution, Map<number, Accum>> }[] = [];
  const elementShare = new Float64Array(ELEMENTS.length);

  for (let e = 0; e < keys.length; e++) {
    const from = inverted.start[e]!;
    const to = inverted.start[e + 1]!;
    let windowWeight = 0;
    let windowHigh = 0;
    let windowPapers = 0;
    let raw = 0;
    const periods: Record<Resolution, Map<number, Accum>> = { yearly: new Map(), monthly: new Map(), daily: new Map() };
    const recency = new Float64Array(to - from);
    const weights = new Float64Array(to - from);
    if (type !== 'element') elementShare.fill(0);

    for (let i = from; i < to; i++) {
      const p = inverted.papers[i]!;
      const w = fractionalWeight(csr.start[p + 1]! - csr.start[p]!);
      const d = corpus.ageDay[p]!;
      const high = impact.highImpact[p]!;
      weights[i - from] = w;
      if (d !== NO_DAY) {
        const r = w * recencyWeight((cutoff - d) / DAYS_PER_YEAR, params.risDecayYears);
        recency[i - from] = r;
        raw += r;
        if (d > window.startDay && d <= window.endDay) {
          windowWeight += w;
          windowPapers++;
          if (high) windowHigh += w;
        }
      }
      const pk = periodKeys(corpus, p);
      for (const res of resolutions) {
        const k = pk[res];
        if (k === null) continue;
        const end = Math.min(PERIOD_END[res](k), cutoff);
        const age = d === NO_DAY ? 0 : (end - d) / DAYS_PER_YEAR;
        let a = periods[res].get(k);
        if (!a) periods[res].set(k, (a = { weight: 0, high: 0, raw: 0, papers: 0 }));
        a.weight += w;
        a.papers++;
        if (high) a.high += w;
        a.raw += w * recencyWeight(age, params.risDecayYears);
      }
      if (type !== 'element') {
        const es = corpus.elements.start[p]!;
        const ee = corpus.elements.start[p + 1]!;
        const ew = fractionalWeight(ee - es);
        for (let j = es; j < ee; j++) elementShare[corpus.elements.values[j]!]! += w * ew;
      }
    }

    for (const res of resolutions) {
      for (const [k, a] of periods[res]) {
        if (a.raw > (periodRaws[res].get(k) ?? 0)) periodRaws[res].set(k, a.raw);
      }
    }

    const score: EntityScore = {
      type,
      key: keys[e]!,
      paperCount: to - from,
      windowPapers,
      ri: researchIntensity(windowWeight, window.papers),
      ris: raw, // normalised below, once the type's maximum is known
      hri: window.highImpactPapers > 0 ? researchIntensity(windowHigh, window.highImpactPapers) : null,
      ranked: topRanked(ctx, inverted.papers.subarray(from, to), weights, recency, raw),
      history: {},
      routedElements: type === 'element' ? [] : routed(elementShare, params.routedElementsPerSubject),
    };
    scores.push(score);
    pending.push({ score, periods });
  }

  const maxRaw = scores.reduce((m, s) => Math.max(m, s.ris), 0);
  for (const { score, periods } of pending) {
    score.ris = round(researchIntensityScore(score.ris, maxRaw), 4);
    score.ri = round(score.ri, 4);
    score.hri = score.hri === null ? null : round(score.hri, 4);
    for (const res of resolutions) {
      score.history[res] = series(ctx, res, periods[res], periodRaws[res]);
    }
  }
  return scores;
}

interface Accum {
  weight: number;
  high: number;
  raw: number;
  papers: number;
}

function series(
  ctx: ScoringContext,
  res: Resolution,
  periods: Map<number, Accum>,
  maxRaw: Map<number, number>,
): HistorySeries {
  const out: HistorySeries = { period: [], papers: [], ri: [], ris: [], hri: [] };
  for (const k of [...periods.keys()].sort((a, b) => a - b)) {
    const a = periods.get(k)!;
    const t = ctx.totals[res].get(k)!;
    out.period.push(PERIOD_LABEL[res](k));
    out.papers.push(a.papers);
    out.ri.push(round(researchIntensity(a.weight, t.papers), 4));
    out.ris.push(round(researchIntensityScore(a.raw, maxRaw.get(k) ?? 0), 4));
    out.hri.push(t.high > 0 ? round(researchIntensity(a.high, t.high), 4) : null);
  }
  return out;
}

function topRanked(
  ctx: ScoringContext,
  papers: Int32Array,
  weights: Float64Array,
  recency: Float64Array,
  raw: number,
): RankedPaper[] {
  const limit = ctx.params.rankedPapersPerEntity;
  const idx = Array.from({ length: papers.length }, (_, i) => i);
  const pos = ctx.rankPosition;
  if (idx.length > limit * 4) {
    // Partial selection: keep the best `limit` by global rank position without a full sort.
    const positions = Int32Array.from(idx, (i) => pos[papers[i]!]!);
    const threshold = positions.slice().sort()[limit - 1]!;
    const kept = idx.filter((i) => pos[papers[i]!]! <= threshold);
    kept.sort((a, b) => pos[papers[a]!]! - pos[papers[b]!]!);
    return kept.slice(0, limit).map((i) => ranked(papers[i]!, recency[i]!, weights[i]!, raw));
  }
  idx.sort((a, b) => pos[papers[a]!]! - pos[papers[b]!]!);
  return idx.slice(0, limit).map((i) => ranked(papers[i]!, recency[i]!, weights[i]!, raw));
}

function ranked(ordinal: number, recency: number, _weight: number, raw: number): RankedPaper {
  return { ordinal, risContribution: raw > 0 ? round(recency / raw, 8) : 0 };
}

function routed(shares: Float64Array, limit: number): { element: number; share: number }[] {
  let total = 0;
  for (const s of shares) total += s;
  if (total === 0) return [];
  const list: { element: number; share: number }[] = [];
  shares.forEach((s, element) => {
    if (s > 0) list.push({ element, share: s / total });
  });
  list.sort((a, b) => b.share - a.share || a.element - b.element);
  return list.slice(0, limit).map((x) => ({ element: x.element, share: round(x.share, 6) }));
}

import { ELEMENTS } from '../elements/elements.js';
import type { Csr } from './corpus.js';
import { fractionalWeight } from './formulas.js';
import type { Resolution } from './resolutions.js';
import type { ScoringContext } from './scoring-context.js';

export const NO_PERIOD = -1;

/** One entity's sums per period of one resolution, in date order. */
export interface PeriodSums {
  keys: ArrayLike<number>;
  /** Fractional weights of its papers in the period. */
  weight: ArrayLike<number>;
  /** The same, of its high-impact papers. */
  high: ArrayLike<number>;
  /** Weights times recency at the period's end (the RIS sum as at then). */
  raw: ArrayLike<number>;
  papers: ArrayLike<number>;
}

/** The sums every score of one entity type is made from, by entity index. */
export interface TypeSums {
  windowWeight: Float64Array;
  windowHigh: Float64Array;
  windowPapers: Int32Array;
  /** The RIS sum at the cut-off. */
  raw: Float64Array;
  /** Entity e's papers' weights by element: share[e * ELEMENTS.length + element]; null for elements. */
  share: Float64Array | null;
  /** Entity e's sums per period at resolutions[j]. */
  periods(e: number, j: number): PeriodSums;
}

/**
 * Sums every entity of one type in one pass over the papers, in ordinal order: each paper's
 * columns are read once, in order, whatever the number of its entities (a pass per entity over
 * its postings read a dozen columns at random: at 1M works, most of the scoring's time waited on
 * memory). Each entity's sums still take its papers in ordinal order, so every sum is the same
 * number, bit for bit, as one entity at a time. A period's sums stay in per-entity accumulators
 * until the entity's next period starts, then go to flat columns, grouped by entity at the end.
 * An entity whose period keys come out of date order (a date the store could not parse) is
 * summed again on its own, the slow way, which takes them in any order.
 */
export function sumEntities(
  ctx: ScoringContext,
  csr: Csr,
  entities: number,
  resolutions: readonly Resolution[],
  routes: boolean,
  inverted: { start: Int32Array; papers: Int32Array },
): TypeSums {
  const { corpus, impact, recencyNow, inWindow } = ctx;
  const n = corpus.n;
  const windowWeight = new Float64Array(entities);
  const windowHigh = new Float64Array(entities);
  const windowPapers = new Int32Array(entities);
  const raw = new Float64Array(entities);
  const elementCount = ELEMENTS.length;
  const share = routes ? new Float64Array(entities * elementCount) : null;
  const irregular = new Uint8Array(entities);
  const keyColumns = resolutions.map((r) => ctx.periodKey[r]);
  const recencyColumns = resolutions.map((r) => ctx.periodRecency[r]);
  const open = resolutions.map(() => new OpenPeriods(entities));
  const closed = resolutions.map(() => new ClosedPeriods());
  const nres = resolutions.length;
  const periodKeys = new Int32Array(nres);
  const periodRaw = new Float64Array(nres);
  const { start, values } = csr;
  const highImpact = impact.highImpact;
  const elementStart = corpus.elements.start;
  const elementValues = corpus.elements.values;

  for (let p = 0; p < n; p++) {
    const from = start[p]!;
    const to = start[p + 1]!;
    if (from === to) continue;
    const w = fractionalWeight(to - from);
    const high = highImpact[p] === 1;
    const r = w * recencyNow[p]!;
    const inside = inWindow[p] === 1;
    for (let j = 0; j < nres; j++) {
      periodKeys[j] = keyColumns[j]![p]!;
      periodRaw[j] = w * recencyColumns[j]![p]!;
    }
    const es = elementStart[p]!;
    const ee = elementStart[p + 1]!;
    const ew = fractionalWeight(ee - es);
    for (let i = from; i < to; i++) {
      const e = values[i]!;
      raw[e]! += r;
      if (inside) {
        windowWeight[e]! += w;
        windowPapers[e]!++;
        if (high) windowHigh[e]! += w;
      }
      for (let j = 0; j < nres; j++) {
        const k = periodKeys[j]!;
        if (k !== NO_PERIOD && !open[j]!.add(e, k, w, high, periodRaw[j]!, closed[j]!)) irregular[e] = 1;
      }
      if (share !== null) {
        const row = e * elementCount;
        for (let x = es; x < ee; x++) share[row + elementValues[x]!]! += w * ew;
      }
    }
  }
  const grouped = resolutions.map((_, j) => {
    open[j]!.closeAll(closed[j]!);
    return closed[j]!.byEntity(entities);
  });

  // The few entities out of date order, again on their own.
  const slow = new Map<number, PeriodRuns[]>();
  for (let e = 0; e < entities; e++) {
    if (!irregular[e]) continue;
    const runs = resolutions.map(() => new PeriodRuns());
    let ww = 0;
    let wh = 0;
    let wp = 0;
    let rr = 0;
    const row = e * elementCount;
    if (share !== null) share.fill(0, row, row + elementCount);
    for (let i = inverted.start[e]!; i < inverted.start[e + 1]!; i++) {
      const p = inverted.papers[i]!;
      const w = fractionalWeight(start[p + 1]! - start[p]!);
      const high = highImpact[p] === 1;
      rr += w * recencyNow[p]!;
      if (inWindow[p]) {
        ww += w;
        wp++;
        if (high) wh += w;
      }
      for (let j = 0; j < nres; j++) {
        const k = keyColumns[j]![p]!;
        if (k !== NO_PERIOD) runs[j]!.add(k, w, high, w * recencyColumns[j]![p]!);
      }
      if (share !== null) {
        const es = elementStart[p]!;
        const ee = elementStart[p + 1]!;
        const ew = fractionalWeight(ee - es);
        for (let x = es; x < ee; x++) share[row + elementValues[x]!]! += w * ew;
      }
    }
    windowWeight[e] = ww;
    windowHigh[e] = wh;
    windowPapers[e] = wp;
    raw[e] = rr;
    slow.set(e, runs);
  }

  return {
    windowWeight,
    windowHigh,
    windowPapers,
    raw,
    share,
    periods: (e, j) => slow.get(e)?.[j] ?? grouped[j]!.of(e),
  };
}

/** Each entity's current period at one resolution: its key and sums so far (typed, by entity). */
class OpenPeriods {
  private readonly key: Int32Array;
  private readonly papers: Int32Array;
  private readonly weight: Float64Array;
  private readonly high: Float64Array;
  private readonly raw: Float64Array;

  constructor(entities: number) {
    this.key = new Int32Array(entities);
    this.papers = new Int32Array(entities);
    this.weight = new Float64Array(entities);
    this.high = new Float64Array(entities);
    this.raw = new Float64Array(entities);
  }

  /** Adds a paper to entity e's period k; false when k comes before its current period. */
  add(e: number, k: number, w: number, high: boolean, raw: number, closed: ClosedPeriods): boolean {
    if (this.papers[e] === 0 || this.key[e] !== k) {
      if (this.papers[e]! > 0) {
        if (k < this.key[e]!) return false;
        this.close(e, closed);
      }
      this.key[e] = k;
      this.weight[e] = 0;
      this.high[e] = 0;
      this.raw[e] = 0;
    }
    this.weight[e]! += w;
    this.papers[e]!++;
    if (high) this.high[e]! += w;
    this.raw[e]! += raw;
    return true;
  }

  closeAll(closed: ClosedPeriods): void {
    for (let e = 0; e < this.papers.length; e++) if (this.papers[e]! > 0) this.close(e, closed);
  }

  private close(e: number, closed: ClosedPeriods): void {
    closed.push(e, this.key[e]!, this.papers[e]!, this.weight[e]!, this.high[e]!, this.raw[e]!);
    this.papers[e] = 0;
  }
}

const CHUNK = 1 << 16;

/**
 * Finished periods of every entity, in the order they finished (each entity's in date order), in
 * chunks: no copy as they grow, nothing allocated beyond the last chunk.
 */
class ClosedPeriods {
  private length = 0;
  private readonly entity: Int32Array[] = [];
  private readonly key: Int32Array[] = [];
  private readonly papers: Int32Array[] = [];
  private readonly weight: Float64Array[] = [];
  private readonly high: Float64Array[] = [];
  private readonly raw: Float64Array[] = [];

  push(e: number, key: number, papers: number, weight: number, high: number, raw: number): void {
    const at = this.length & (CHUNK - 1);
    if (at === 0) {
      this.entity.push(new Int32Array(CHUNK));
      this.key.push(new Int32Array(CHUNK));
      this.papers.push(new Int32Array(CHUNK));
      this.weight.push(new Float64Array(CHUNK));
      this.high.push(new Float64Array(CHUNK));
      this.raw.push(new Float64Array(CHUNK));
    }
    const c = this.length >>> 16;
    this.entity[c]![at] = e;
    this.key[c]![at] = key;
    this.papers[c]![at] = papers;
    this.weight[c]![at] = weight;
    this.high[c]![at] = high;
    this.raw[c]![at] = raw;
    this.length++;
  }

  /**
   * The periods grouped by entity (a stable counting sort: each entity's stay in date order), one
   * column at a time, each column's chunks let go once sorted (the peak is one sorted column more).
   */
  byEntity(entities: number): { of(e: number): PeriodSums } {
    const start = new Int32Array(entities + 1);
    for (const chunk of this.entity) for (let i = 0; i < chunk.length; i++) start[chunk[i]! + 1]!++;
    // Chunks are full but the last: the last's unused slots counted entity 0 (taken back here).
    start[1]! -= this.entity.length * CHUNK - this.length;
    for (let e = 0; e < entities; e++) start[e + 1]! += start[e]!;
    const fill = start.slice(0, entities);
    const to = new Int32Array(this.length);
    for (let i = 0; i < this.length; i++) to[i] = fill[this.entity[i >>> 16]![i & (CHUNK - 1)]!]!++;
    this.entity.length = 0;
    const sorted = <T extends Int32Array | Float64Array>(chunks: T[], out: T): T => {
      for (let i = 0; i < this.length; i++) out[to[i]!] = chunks[i >>> 16]![i & (CHUNK - 1)]!;
      chunks.length = 0;
      return out;
    };
    const key = sorted(this.key, new Int32Array(this.length));
    const papers = sorted(this.papers, new Int32Array(this.length));
    const weight = sorted(this.weight, new Float64Array(this.length));
    const high = sorted(this.high, new Float64Array(this.length));
    const raw = sorted(this.raw, new Float64Array(this.length));
    return {
      of: (e) => {
        const a = start[e]!;
        const b = start[e + 1]!;
        return {
          keys: key.subarray(a, b),
          papers: papers.subarray(a, b),
          weight: weight.subarray(a, b),
          high: high.subarray(a, b),
          raw: raw.subarray(a, b),
        };
      },
    };
  }
}

/** One entity's sums per period, appended in date order; a period out of order is found and added to. */
class PeriodRuns implements PeriodSums {
  readonly keys: number[] = [];
  readonly weight: number[] = [];
  readonly high: number[] = [];
  readonly raw: number[] = [];
  readonly papers: number[] = [];
  private last = NO_PERIOD;
  private index = -1;
  // Only used once keys arrive out of order (a date the store could not parse).
  private seen: Map<number, number> | null = null;

  add(key: number, w: number, high: boolean, raw: number): void {
    if (key !== this.last) {
      this.index = this.find(key);
      this.last = key;
    }
    const i = this.index;
    this.weight[i]! += w;
    this.papers[i]!++;
    if (high) this.high[i]! += w;
    this.raw[i]! += raw;
  }

  private find(key: number): number {
    if (this.seen === null) {
      // In date order so far: a later key is a new period.
      const tail = this.keys.length - 1;
      if (tail < 0 || key > this.keys[tail]!) return this.open(key);
      this.seen = new Map(this.keys.map((k, i) => [k, i]));
    }
    // Out of order once: the last key is no longer the largest, so every key is looked up (a
    // later key already seen is added to, not opened again as a second period of the same name).
    return this.seen.get(key) ?? this.open(key);
  }

  private open(key: number): number {
    this.keys.push(key);
    this.weight.push(0);
    this.high.push(0);
    this.raw.push(0);
    this.papers.push(0);
    this.seen?.set(key, this.keys.length - 1);
    return this.keys.length - 1;
  }
}

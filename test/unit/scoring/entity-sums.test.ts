import { describe, expect, it } from 'vitest';
import type { Csr } from '../../../src/scoring/corpus.js';
import { NO_PERIOD, type PeriodSums, sumEntities } from '../../../src/scoring/entity-sums.js';
import type { Resolution } from '../../../src/scoring/resolutions.js';
import type { ScoringContext } from '../../../src/scoring/scoring-context.js';
import { csrOf, random } from '../../helpers/corpora.js';

const ELEMENT_COUNT = 118;

/** A context of `n` papers whose period keys rise with the ordinal, but for the papers in `shuffled`. */
function context(n: number, rnd: () => number, shuffled: Set<number>) {
  const yearly = new Int32Array(n);
  const monthly = new Int32Array(n);
  for (let p = 0; p < n; p++) {
    yearly[p] = rnd() < 0.05 ? NO_PERIOD : 2000 + Math.floor((p * 20) / n);
    monthly[p] = rnd() < 0.1 ? NO_PERIOD : 24_000 + Math.floor((p * 240) / n);
    if (shuffled.has(p)) yearly[p] = 1990; // a year before every other: out of date order
  }
  const elements = csrOf(
    Array.from({ length: n }, () =>
      Array.from({ length: Math.floor(rnd() * 3) }, () => Math.floor(rnd() * 5)),
    ),
  );
  return {
    corpus: { n, elements },
    impact: { highImpact: Uint8Array.from({ length: n }, () => (rnd() < 0.2 ? 1 : 0)) },
    recencyNow: Float64Array.from({ length: n }, () => rnd()),
    inWindow: Uint8Array.from({ length: n }, () => (rnd() < 0.4 ? 1 : 0)),
    periodKey: { yearly, monthly, daily: new Int32Array(n).fill(NO_PERIOD) },
    periodRecency: {
      yearly: Float64Array.from({ length: n }, () => rnd()),
      monthly: Float64Array.from({ length: n }, () => rnd()),
      daily: new Float64Array(n),
    },
  } as unknown as ScoringContext;
}

function invert(csr: Csr, n: number, entities: number) {
  const lists: number[][] = Array.from({ length: entities }, () => []);
  for (let p = 0; p < n; p++)
    for (let i = csr.start[p]!; i < csr.start[p + 1]!; i++) lists[csr.values[i]!]!.push(p);
  return { start: csrOf(lists).start, papers: Int32Array.from(lists.flat()) };
}

/** The rule, one entity at a time: its papers in ordinal order, periods in the order first seen. */
function oracle(ctx: ScoringContext, csr: Csr, e: number, resolutions: Resolution[]) {
  const weight = (p: number) => 1 / (csr.start[p + 1]! - csr.start[p]!);
  let raw = 0;
  let windowWeight = 0;
  let windowHigh = 0;
  let windowPapers = 0;
  const share = new Array<number>(ELEMENT_COUNT).fill(0);
  const periods = resolutions.map(() => ({
    keys: [] as number[],
    weight: [] as number[],
    high: [] as number[],
    raw: [] as number[],
    papers: [] as number[],
  }));
  for (let p = 0; p < ctx.corpus.n; p++) {
    const mine = Array.from(csr.values.subarray(csr.start[p]!, csr.start[p + 1]!)).filter((v) => v === e);
    for (const _ of mine) {
      const w = weight(p);
      const high = ctx.impact.highImpact[p] === 1;
      raw += w * ctx.recencyNow[p]!;
      if (ctx.inWindow[p]) {
        windowWeight += w;
        windowPapers++;
        if (high) windowHigh += w;
      }
      resolutions.forEach((r, j) => {
        const k = ctx.periodKey[r][p]!;
        if (k === NO_PERIOD) return;
        const s = periods[j]!;
        let i = s.keys.indexOf(k);
        if (i < 0) {
          i = s.keys.push(k) - 1;
          s.weight.push(0);
          s.high.push(0);
          s.raw.push(0);
          s.papers.push(0);
        }
        s.weight[i]! += w;
        s.papers[i]!++;
        if (high) s.high[i]! += w;
        s.raw[i]! += w * ctx.periodRecency[r][p]!;
      });
      const { start, values } = ctx.corpus.elements;
      for (let x = start[p]!; x < start[p + 1]!; x++)
        share[values[x]!]! += w * (1 / (start[p + 1]! - start[p]!));
    }
  }
  return { raw, windowWeight, windowHigh, windowPapers, share, periods };
}

const plain = (s: PeriodSums) => ({
  keys: Array.from(s.keys),
  weight: Array.from(s.weight),
  high: Array.from(s.high),
  raw: Array.from(s.raw),
  papers: Array.from(s.papers),
});

describe('sumEntities: every entity of a type in one pass over the papers', () => {
  it('sums a pinned example', () => {
    // Papers 0..2; entity 0 on papers 0 and 2 (weights 1/2 and 1), entity 1 on paper 0.
    const csr = csrOf([[0, 1], [], [0]]);
    const ctx = {
      corpus: { n: 3, elements: csrOf([[26], [], [26, 27]]) },
      impact: { highImpact: Uint8Array.from([1, 0, 0]) },
      recencyNow: Float64Array.from([0.5, 1, 0.25]),
      inWindow: Uint8Array.from([1, 0, 1]),
      periodKey: { yearly: Int32Array.from([2020, 2020, 2021]) },
      periodRecency: { yearly: Float64Array.from([0.8, 1, 0.4]) },
    } as unknown as ScoringContext;
    const sums = sumEntities(ctx, csr, 2, ['yearly'], true, invert(csr, 3, 2));
    expect(Array.from(sums.raw)).toEqual([0.5 * 0.5 + 0.25, 0.5 * 0.5]);
    expect(Array.from(sums.windowWeight)).toEqual([1.5, 0.5]);
    expect(Array.from(sums.windowHigh)).toEqual([0.5, 0.5]);
    expect(Array.from(sums.windowPapers)).toEqual([2, 1]);
    expect(plain(sums.periods(0, 0))).toEqual({
      keys: [2020, 2021],
      weight: [0.5, 1],
      high: [0.5, 0],
      raw: [0.4, 0.4],
      papers: [1, 1],
    });
    // Entity 0: Fe (26) 1/2 from paper 0, Fe and Co (27) 1/2 each from paper 2.
    expect(sums.share![26]).toBe(1);
    expect(sums.share![27]).toBe(0.5);
    expect(sums.share![ELEMENT_COUNT + 26]).toBe(0.5);
  });

  for (const [seed, shuffledShare] of [
    [1, 0],
    [2, 0.01],
    [3, 0.1],
  ] as const) {
    it(`gives each entity the same numbers, bit for bit, as summing it alone (seed ${seed}, ${shuffledShare * 100}% of papers out of date order)`, () => {
      const rnd = random(seed);
      const n = 2_000;
      const entities = 40;
      const shuffled = new Set<number>();
      for (let p = 0; p < n; p++) if (rnd() < shuffledShare) shuffled.add(p);
      const ctx = context(n, rnd, shuffled);
      // Papers with 0-4 entities, some twice (a repeated value is summed twice, as the CSR holds it).
      const csr = csrOf(
        Array.from({ length: n }, () =>
          Array.from({ length: Math.floor(rnd() * 5) }, () => Math.floor(rnd() * entities)).sort(
            (a, b) => a - b,
          ),
        ),
      );
      const resolutions: Resolution[] = ['yearly', 'monthly'];
      const sums = sumEntities(ctx, csr, entities, resolutions, true, invert(csr, n, entities));
      let outOfOrder = 0;
      for (let e = 0; e < entities; e++) {
        const want = oracle(ctx, csr, e, resolutions);
        expect(sums.raw[e]).toBe(want.raw);
        expect(sums.windowWeight[e]).toBe(want.windowWeight);
        expect(sums.windowHigh[e]).toBe(want.windowHigh);
        expect(sums.windowPapers[e]).toBe(want.windowPapers);
        expect(Array.from(sums.share!.subarray(e * ELEMENT_COUNT, (e + 1) * ELEMENT_COUNT))).toEqual(
          want.share,
        );
        resolutions.forEach((_, j) => {
          expect(plain(sums.periods(e, j))).toEqual(want.periods[j]);
        });
        const keys = want.periods[0]!.keys;
        if (keys.some((k, i) => i > 0 && k < keys[i - 1]!)) outOfOrder++;
      }
      // The out-of-order path is taken where the data asks for it, and only there.
      if (shuffledShare === 0) expect(outOfOrder).toBe(0);
      else expect(outOfOrder).toBeGreaterThan(0);
    });
  }
});

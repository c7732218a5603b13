/**
 * Seeded pseudo-random numbers and skewed samplers for the synthetic corpus. Pure: nothing here reads
 * the clock or Math.random, so the same seed always gives the same sequence.
 */

/** 32-bit integer hash (lowbias32 by Chris Wellons): a cheap, well-mixed bijection on uint32. */
function hash32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Combine several integers (seed, index, salt...) into one well-mixed uint32. */
export function mix(...values: number[]): number {
  let h = 0x9e3779b9;
  for (const v of values) h = hash32((h ^ hash32(v | 0)) + 0x6a09e667);
  return h;
}

/** FNV-1a hash of a string to uint32 (for deterministic ids derived from names). */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return hash32(h);
}

/** mulberry32: a small, fast 32-bit PRNG; good enough for synthetic data, fully deterministic. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Re-seed in place (avoids allocating one generator per record). */
  reseed(seed: number): this {
    this.state = seed >>> 0;
    return this;
  }

  /** Next uint32. */
  nextU32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array, uniformly. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Standard normal (Box-Muller, one value per call). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /**
   * Pareto-like heavy tail: integer >= 0 with P(X >= x) ~ (1 + x/scale)^-alpha.
   * alpha around 1.2-2 gives "many zeros, long tail to thousands".
   */
  powerLaw(scale: number, alpha: number, max = Number.POSITIVE_INFINITY): number {
    const u = 1 - this.next();
    const x = scale * (u ** (-1 / alpha) - 1);
    return Math.min(max, Math.floor(x));
  }
}

/**
 * Sampler over indices 0..n-1 with given (unnormalised) weights, by binary search over the cumulative
 * table. O(log n) per draw, no allocation.
 */
export class WeightedSampler {
  private readonly cumulative: Float64Array;
  readonly size: number;

  constructor(weights: ArrayLike<number>) {
    this.size = weights.length;
    if (this.size === 0) throw new Error('WeightedSampler needs at least one weight');
    this.cumulative = new Float64Array(this.size);
    let total = 0;
    for (let i = 0; i < this.size; i++) {
      total += Math.max(0, weights[i] ?? 0);
      this.cumulative[i] = total;
    }
    if (!(total > 0)) throw new Error('WeightedSampler needs a positive total weight');
    for (let i = 0; i < this.size; i++) this.cumulative[i] = (this.cumulative[i] as number) / total;
  }

  /** Draw an index using the uniform u in [0, 1). */
  sampleWith(u: number): number {
    const c = this.cumulative;
    let lo = 0;
    let hi = this.size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((c[mid] as number) > u) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  sample(rng: Rng): number {
    return this.sampleWith(rng.next());
  }

  /** Probability of index i. */
  probability(i: number): number {
    const c = this.cumulative;
    return (c[i] as number) - (i > 0 ? (c[i - 1] as number) : 0);
  }
}

/** Zipf weights 1/(rank+offset)^s for ranks 0..n-1. */
function zipfWeights(n: number, s: number, offset = 1): Float64Array {
  const w = new Float64Array(n);
  for (let i = 0; i < n; i++) w[i] = 1 / (i + offset) ** s;
  return w;
}

/** Zipf sampler over ranks 0..n-1 (rank 0 most frequent). */
export function zipfSampler(n: number, s: number, offset = 1): WeightedSampler {
  return new WeightedSampler(zipfWeights(n, s, offset));
}

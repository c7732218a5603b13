/**
 * Set algebra over posting lists: paper ordinals as ascending Int32Arrays without duplicates.
 * Pure functions; the lab matches a query with these (AND, OR, NOT, year range) and picks its
 * sample and top papers with them.
 */
export type Postings = Int32Array;

export const EMPTY: Postings = new Int32Array(0);

/** First index in a[from..to) whose value is >= x (binary search), `to` when none is. */
function lowerBound(a: Postings, x: number, from: number, to = a.length): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * First index in a[from..] whose value is >= x, galloping: steps of 1, 2, 4... from `from`, then a
 * binary search in the last step. A walk through a list of about the other's size steps a few
 * places each time: a binary search over the rest of a list of millions took 22 probes a value,
 * the most of a lab quote's first call at 10M works.
 */
function gallop(a: Postings, x: number, from: number): number {
  let step = 1;
  let lo = from;
  let hi = from;
  while (hi < a.length && a[hi]! < x) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  return lowerBound(a, x, lo, Math.min(hi, a.length));
}

/** a AND b. Walks the shorter list and gallops through the longer one, so a rare term is cheap. */
export function intersect(a: Postings, b: Postings): Postings {
  const [small, large] = a.length <= b.length ? [a, b] : [b, a];
  const out = new Int32Array(small.length);
  let n = 0;
  let j = 0;
  for (let i = 0; i < small.length && j < large.length; i++) {
    const x = small[i]!;
    j = gallop(large, x, j);
    if (large[j] === x) out[n++] = x;
  }
  return out.subarray(0, n);
}

/** The AND of several lists, rarest first (the result only shrinks). */
export function intersectAll(lists: Postings[]): Postings {
  if (lists.length === 0) return EMPTY;
  const sorted = [...lists].sort((x, y) => x.length - y.length);
  let acc = sorted[0]!;
  for (let i = 1; i < sorted.length && acc.length > 0; i++) acc = intersect(acc, sorted[i]!);
  return acc;
}

/**
 * a OR b OR ...: merged two by two in rounds, as a merge sort does, so each value is merged about
 * log2(lists) times (merged into one growing list, a wildcard's dozens of lists made the first
 * ones' values be copied again at every merge).
 */
export function unionAll(lists: Postings[]): Postings {
  let round = lists.filter((l) => l.length > 0);
  if (round.length === 0) return EMPTY;
  while (round.length > 1) {
    const next: Postings[] = [];
    for (let i = 0; i + 1 < round.length; i += 2) next.push(union(round[i]!, round[i + 1]!));
    if (round.length % 2 === 1) next.push(round[round.length - 1]!);
    round = next;
  }
  return round[0]!;
}

function union(a: Postings, b: Postings): Postings {
  const out = new Int32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x < y) {
      out[n++] = x;
      i++;
    } else if (y < x) {
      out[n++] = y;
      j++;
    } else {
      out[n++] = x;
      i++;
      j++;
    }
  }
  while (i < a.length) out[n++] = a[i++]!;
  while (j < b.length) out[n++] = b[j++]!;
  return out.subarray(0, n);
}

/** a AND NOT b. */
export function difference(a: Postings, b: Postings): Postings {
  if (b.length === 0 || a.length === 0) return a;
  const out = new Int32Array(a.length);
  let n = 0;
  let j = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    j = gallop(b, x, j);
    if (b[j] !== x) out[n++] = x;
  }
  return out.subarray(0, n);
}

/** The papers whose value in `column` lies in [from, to] (inclusive; null = open). */
export function filterRange(
  a: Postings,
  column: ArrayLike<number>,
  from: number | null,
  to: number | null,
): Postings {
  const lo = from ?? Number.NEGATIVE_INFINITY;
  const hi = to ?? Number.POSITIVE_INFINITY;
  const out = new Int32Array(a.length);
  let n = 0;
  for (let i = 0; i < a.length; i++) {
    const v = column[a[i]!]!;
    if (v >= lo && v <= hi) out[n++] = a[i]!;
  }
  return out.subarray(0, n);
}

/**
 * A fixed sample of `size` papers: evenly spaced through the list (which is in publication date
 * order), so the same list always gives the same sample and every period is represented.
 */
export function evenSample(a: Postings, size: number): Postings {
  if (a.length <= size) return a;
  const out = new Int32Array(size);
  for (let i = 0; i < size; i++) out[i] = a[Math.floor((i * a.length) / size)]!;
  return out;
}

/**
 * The k papers with the lowest `key` (e.g. their global rank position), lowest first. A bounded
 * max-heap: O(n log k), no copy of a large match list.
 */
export function lowestK(a: Postings, key: ArrayLike<number>, k: number): number[] {
  const heap: number[] = [];
  const less = (x: number, y: number) => key[x]! > key[y]!; // max-heap on key
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!less(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let top = i;
      if (l < heap.length && less(heap[l]!, heap[top]!)) top = l;
      if (r < heap.length && less(heap[r]!, heap[top]!)) top = r;
      if (top === i) return;
      [heap[i], heap[top]] = [heap[top]!, heap[i]!];
      i = top;
    }
  };
  if (k <= 0) return [];
  for (let i = 0; i < a.length; i++) {
    const p = a[i]!;
    if (heap.length < k) {
      heap.push(p);
      up(heap.length - 1);
    } else if (key[p]! < key[heap[0]!]!) {
      heap[0] = p;
      down(0);
    }
  }
  return heap.sort((x, y) => key[x]! - key[y]!);
}

/** How many papers of the list fall on each value of `column` (e.g. year, cluster). */
export function countBy(a: Postings, column: ArrayLike<number>): Map<number, number> {
  const counts = new Map<number, number>();
  for (let i = 0; i < a.length; i++) {
    const v = column[a[i]!]!;
    counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  return counts;
}

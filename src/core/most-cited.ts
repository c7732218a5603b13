interface MostCited {
  /** [ordinal, times cited] of ranks start..end-1: most cited first, then the lower ordinal. */
  page: [number, number][];
  /** How many distinct papers are cited. */
  distinct: number;
}

/**
 * The papers cited most often by a set of papers, from their references (ordinals). Ranks start..end-1
 * by times cited (descending), ties by ordinal (ascending). Counts with one typed-array sort
 * instead of a map per reference, and fully orders only the papers that can reach the page.
 */
export function mostCited(
  references: readonly (Int32Array | null | undefined)[],
  start: number,
  end: number,
): MostCited {
  let total = 0;
  for (const r of references) if (r) total += r.length;
  const all = new Int32Array(total);
  let k = 0;
  for (const r of references) {
    if (!r) continue;
    all.set(r, k);
    k += r.length;
  }
  all.sort();
  // First pass over the runs of equal ordinals: how many papers are cited how often.
  const byCount: number[] = [0];
  let distinct = 0;
  for (let i = 0; i < total; ) {
    let j = i + 1;
    while (j < total && all[j] === all[i]) j++;
    const c = j - i;
    while (byCount.length <= c) byCount.push(0);
    byCount[c]!++;
    distinct++;
    i = j;
  }
  // The lowest count a paper needs to rank before `end`: every paper cited at least that often
  // is ordered; the rest cannot reach the page.
  let threshold = 1;
  if (end < distinct) {
    let n = 0;
    for (threshold = byCount.length - 1; threshold > 1; threshold--) {
      n += byCount[threshold]!;
      if (n >= end) break;
    }
  }
  const ranked: [number, number][] = [];
  for (let i = 0; i < total; ) {
    let j = i + 1;
    while (j < total && all[j] === all[i]) j++;
    if (j - i >= threshold) ranked.push([all[i]!, j - i]);
    i = j;
  }
  // Pushed in ascending ordinal order, and the sort is stable: ties keep the lower ordinal first.
  ranked.sort((a, b) => b[1] - a[1]);
  return { page: ranked.slice(start, end), distinct };
}

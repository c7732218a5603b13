import { isoDay, monthLabel } from './dates.js';
import type { Resolution } from './resolutions.js';

/**
 * A history series as the snapshot stores it: binary, little-endian, written straight from the
 * scoring's sums (JSON.stringify of 100 MB of series took 1.5 s of the scoring at 1M works, and
 * its strings as much again in garbage collection). Layout, n periods:
 *   int32 n | int32 period key [n] | int32 papers [n] | pad to 8 | float64 ri [n] | ris [n] | hri [n]
 * A period key is the year, the month index (year * 12 + month - 1) or the day number, by
 * resolution; hri is NaN where the period had no high-impact papers (null in an answer).
 */
export interface StoredSeries {
  period: string[];
  papers: number[];
  ri: number[];
  ris: number[];
  hri: (number | null)[];
}

export const PERIOD_LABEL: Record<Resolution, (key: number) => string> = {
  yearly: (y) => String(y),
  monthly: monthLabel,
  daily: isoDay,
};

const floatsAt = (n: number) => 4 + 8 * n + ((4 + 8 * n) % 8);

/** Bytes of an encoded series of n periods. */
export function seriesBytes(n: number): number {
  return floatsAt(n) + 24 * n;
}

/**
 * Encoded series, appended to chunks of memory of their own (a slab: no allocation per series);
 * each `take` returns a view of the bytes it wrote.
 */
export class SeriesWriter {
  private chunk = new ArrayBuffer(0);
  private at = 0;

  /** Room for a series of n periods; write its values with the returned views, then they are kept. */
  take(n: number): {
    bytes: Uint8Array;
    key: Int32Array;
    papers: Int32Array;
    ri: Float64Array;
    ris: Float64Array;
    hri: Float64Array;
  } {
    const size = seriesBytes(n);
    if (this.at + size > this.chunk.byteLength) {
      this.chunk = new ArrayBuffer(Math.max(size, 4 << 20));
      this.at = 0;
    }
    const base = this.at;
    this.at += size;
    const ints = new Int32Array(this.chunk, base, 1 + 2 * n);
    ints[0] = n;
    const floats = base + floatsAt(n);
    return {
      bytes: new Uint8Array(this.chunk, base, size),
      key: ints.subarray(1, 1 + n),
      papers: ints.subarray(1 + n, 1 + 2 * n),
      ri: new Float64Array(this.chunk, floats, n),
      ris: new Float64Array(this.chunk, floats + 8 * n, n),
      hri: new Float64Array(this.chunk, floats + 16 * n, n),
    };
  }
}

/** A stored series back as labels and numbers (the API's shape). */
export function decodeSeries(blob: Uint8Array, resolution: Resolution): StoredSeries {
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const n = view.getInt32(0, true);
  if (n < 0 || seriesBytes(n) !== blob.byteLength) throw new Error('a history series of another layout');
  const label = PERIOD_LABEL[resolution];
  const floats = floatsAt(n);
  const out: StoredSeries = { period: [], papers: [], ri: [], ris: [], hri: [] };
  for (let i = 0; i < n; i++) {
    out.period.push(label(view.getInt32(4 + 4 * i, true)));
    out.papers.push(view.getInt32(4 + 4 * (n + i), true));
    out.ri.push(view.getFloat64(floats + 8 * i, true));
    out.ris.push(view.getFloat64(floats + 8 * (n + i), true));
    const hri = view.getFloat64(floats + 8 * (2 * n + i), true);
    out.hri.push(Number.isNaN(hri) ? null : hri);
  }
  return out;
}

/**
 * An entity's ranked papers, stored as one blob per subject instead of up to 100 rows each
 * (millions of rows at scale): rank i is entry i, an int32 paper ordinal then a float64
 * ris_contribution, little-endian, 12 bytes per paper.
 */
export interface RankedEntry {
  rank: number;
  ordinal: number;
  risContribution: number;
}

const ENTRY = 12;

export function encodeRanked(ordinals: Int32Array, contributions: Float64Array): Buffer {
  const buf = Buffer.alloc(ordinals.length * ENTRY);
  for (let i = 0; i < ordinals.length; i++) {
    buf.writeInt32LE(ordinals[i]!, i * ENTRY);
    buf.writeDoubleLE(contributions[i]!, i * ENTRY + 4);
  }
  return buf;
}

export function decodeRanked(blob: Buffer | null | undefined): RankedEntry[] {
  if (!blob) return [];
  const out: RankedEntry[] = [];
  for (let i = 0; i + ENTRY <= blob.length; i += ENTRY) {
    out.push({
      rank: i / ENTRY + 1,
      ordinal: blob.readInt32LE(i),
      risContribution: blob.readDoubleLE(i + 4),
    });
  }
  return out;
}

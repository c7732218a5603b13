/**
 * The references packed (snapshot schema 11): each paper's cited ordinals, ascending, as LEB128
 * varints, the first as it is and each next as its gap from the one before. A reference took 4
 * bytes as an int32; packed it takes about 3 at 10M works (gaps of a few hundred thousand) and
 * less on smaller corpora: the column a replica holds whole in memory for research's foundational
 * lens, 0.9 GB at 10M works as int32s. refs_start (a paper's first value's index, as before) says
 * how many a paper has; refs_checkpoints gives the byte at which every CHECKPOINT_PAPERS-th paper
 * starts, so a paper is found by decoding at most that many papers' bytes from its checkpoint.
 */

/**
 * Papers between two byte offsets kept: a paper is found past fewer than this many others. 16 cost
 * research 16% of its p50 at 1M works (a question reads a thousand papers' references, each found
 * past 7.5 papers' on average); 4 costs 20 MB at 10M works.
 */
export const CHECKPOINT_PAPERS = 4;

/** Bytes of the varint of `v` (a non-negative integer below 2^31). */
export function varintBytes(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Writes the varint of `v` at `at`; returns the offset after it. */
function writeVarint(out: Uint8Array, at: number, v: number): number {
  while (v >= 0x80) {
    out[at++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[at++] = v;
  return at;
}

/** Bytes one paper's values (ascending) pack into. */
export function packedBytes(values: ArrayLike<number>, from: number, to: number): number {
  let bytes = 0;
  for (let i = from; i < to; i++) bytes += varintBytes(i === from ? values[i]! : values[i]! - values[i - 1]!);
  return bytes;
}

/** Packs one paper's values (ascending) at `at`; returns the offset after them. */
export function packPaper(
  values: ArrayLike<number>,
  from: number,
  to: number,
  out: Uint8Array,
  at: number,
): number {
  for (let i = from; i < to; i++)
    at = writeVarint(out, at, i === from ? values[i]! : values[i]! - values[i - 1]!);
  return at;
}

/** Skips `count` varints from `at`; returns the offset after them. */
function skipVarints(bytes: Uint8Array, at: number, count: number): number {
  for (let left = count; left > 0; at++) if (bytes[at]! < 0x80) left--;
  return at;
}

/** Decodes `count` packed values (one paper's) from `at`, into a new array. */
export function unpackPaper(bytes: Uint8Array, at: number, count: number): Int32Array {
  const out = new Int32Array(count);
  let previous = 0;
  for (let i = 0; i < count; i++) {
    // At most five bytes, the fifth at most 7 for a value below 2^31: shifts stay in int32.
    let v = 0;
    let shift = 0;
    let b: number;
    do {
      b = bytes[at++]!;
      v |= (b & 0x7f) << shift;
      shift += 7;
    } while (b >= 0x80);
    previous = i === 0 ? v : previous + v;
    out[i] = previous;
  }
  return out;
}

/** The papers each paper cites, from the packed column, its starts and its checkpoints. */
export function packedReferences(
  start: Int32Array,
  packed: Uint8Array,
  checkpoints: Float64Array,
): (ordinal: number) => Int32Array {
  return (p) => {
    if (!(p >= 0 && p + 1 < start.length)) return new Int32Array(0);
    const first = p - (p % CHECKPOINT_PAPERS);
    const at = skipVarints(packed, checkpoints[first / CHECKPOINT_PAPERS]!, start[p]! - start[first]!);
    return unpackPaper(packed, at, start[p + 1]! - start[p]!);
  };
}

/**
 * The packed values decoded forward through the column's parts (an incremental build reads the
 * previous snapshot's this way, a part at a time), each paper's first value as it is and the
 * others as gaps, told apart by `start` (refs_start).
 */
export class PackedValues {
  private part: Uint8Array = new Uint8Array(0);
  private offset = 0;
  /** The index of the next value to decode, its paper, and the last value decoded. */
  private next = 0;
  private paper = 0;
  private value = 0;

  constructor(
    private readonly parts: Iterator<Uint8Array>,
    private readonly start: Int32Array,
  ) {}

  /** The value at `i`, which must not be before the last one read. */
  at(i: number): number {
    if (i < this.next - 1) throw new Error('the packed references were read out of order');
    while (this.next <= i) {
      while (this.start[this.paper + 1]! <= this.next) this.paper++;
      const v = this.varint();
      this.value = this.next === this.start[this.paper] ? v : this.value + v;
      this.next++;
    }
    return this.value;
  }

  /** One varint, its bytes perhaps across two parts (shifts as unpackPaper's). */
  private varint(): number {
    let v = 0;
    let shift = 0;
    for (;;) {
      if (this.offset === this.part.length) {
        const blob = this.parts.next();
        if (blob.done) throw new Error('the packed references are truncated');
        this.part = blob.value;
        this.offset = 0;
        continue;
      }
      const b = this.part[this.offset++]!;
      v |= (b & 0x7f) << shift;
      shift += 7;
      if (b < 0x80) return v;
    }
  }
}

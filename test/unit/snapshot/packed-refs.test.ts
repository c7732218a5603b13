import { describe, expect, it } from 'vitest';
import {
  CHECKPOINT_PAPERS,
  packedBytes,
  packedReferences,
  packPaper,
  unpackPaper,
  varintBytes,
} from '../../../src/snapshot/packed-refs.js';

/** Papers' ascending references packed as the build packs them, with starts and checkpoints. */
function pack(papers: number[][]) {
  const start = new Int32Array(papers.length + 1);
  papers.forEach((l, p) => {
    start[p + 1] = start[p]! + l.length;
  });
  const values = papers.flat();
  const checkpoints = new Float64Array(Math.ceil(papers.length / CHECKPOINT_PAPERS));
  let total = 0;
  papers.forEach((_, p) => {
    if (p % CHECKPOINT_PAPERS === 0) checkpoints[p / CHECKPOINT_PAPERS] = total;
    total += packedBytes(values, start[p]!, start[p + 1]!);
  });
  const packed = new Uint8Array(total);
  let at = 0;
  papers.forEach((_, p) => {
    at = packPaper(values, start[p]!, start[p + 1]!, packed, at);
  });
  expect(at).toBe(total);
  return { start, packed, checkpoints };
}

describe('packed references', () => {
  it('size each varint by its bits (7 a byte)', () => {
    expect(
      [0, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152, 2 ** 28, 2 ** 31 - 1].map(varintBytes),
    ).toEqual([1, 1, 2, 2, 3, 3, 4, 5, 5]);
  });

  it('pack a first value and its gaps: [300, 301, 10000] is 2 + 1 + 2 bytes', () => {
    const out = new Uint8Array(8);
    expect(packPaper([300, 301, 10_000], 0, 3, out, 0)).toBe(5);
    // 300 = 0b10_0101100: 0xac 0x02; gap 1: 0x01; gap 9699 = 0b1001011_1100011: 0xe3 0x4b.
    expect([...out.subarray(0, 5)]).toEqual([0xac, 0x02, 0x01, 0xe3, 0x4b]);
    expect([...unpackPaper(out, 0, 3)]).toEqual([300, 301, 10_000]);
  });

  it('give back every paper, across checkpoints, with repeats, empty papers and large ordinals', () => {
    // 50 papers (four checkpoints), pseudo-random lists of 0-40 ordinals up to 2^31 - 1.
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed;
    };
    const papers = Array.from({ length: 50 }, (_, p) =>
      p % 7 === 3
        ? []
        : Array.from({ length: next() % 41 }, () => (p % 5 === 0 ? next() : next() % 10_000_000)).sort(
            (a, b) => a - b,
          ),
    );
    papers[10] = [5, 5, 5, 2 ** 31 - 1];
    const { start, packed, checkpoints } = pack(papers);
    const refs = packedReferences(start, packed, checkpoints);
    for (let p = 0; p < papers.length; p++) expect([...refs(p)], `paper ${p}`).toEqual(papers[p]);
    expect(refs(-1).length).toBe(0);
    expect(refs(papers.length).length).toBe(0);
    // Smaller than int32s.
    expect(packed.length).toBeLessThan(4 * start[papers.length]!);
  });
});

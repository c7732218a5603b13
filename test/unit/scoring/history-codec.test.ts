import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dayNumber } from '../../../src/scoring/dates.js';
import { decodeSeries, SeriesWriter, seriesBytes } from '../../../src/scoring/history-codec.js';
import { RESOLUTIONS, type Resolution } from '../../../src/scoring/resolutions.js';

/** One series written with the writer: what the scoring does for every subject and resolution. */
function write(
  writer: SeriesWriter,
  rows: { key: number; papers: number; ri: number; ris: number; hri: number | null }[],
): Uint8Array {
  const out = writer.take(rows.length);
  rows.forEach((r, i) => {
    out.key[i] = r.key;
    out.papers[i] = r.papers;
    out.ri[i] = r.ri;
    out.ris[i] = r.ris;
    out.hri[i] = r.hri ?? Number.NaN;
  });
  return out.bytes;
}

describe('history codec', () => {
  it('lays out a pinned series byte for byte', () => {
    const bytes = write(new SeriesWriter(), [{ key: 2024, papers: 3, ri: 0.5, ris: 100, hri: null }]);
    // n = 1, key 2024, papers 3, 4 bytes of padding, then ri, ris, hri as float64.
    expect(bytes.length).toBe(seriesBytes(1));
    expect(Buffer.from(bytes).toString('hex')).toBe(
      '01000000e807000003000000' + '00000000' + '000000000000e03f' + '0000000000005940' + '000000000000f87f',
    );
    expect(decodeSeries(bytes, 'yearly')).toEqual({
      period: ['2024'],
      papers: [3],
      ri: [0.5],
      ris: [100],
      hri: [null],
    });
  });

  it('labels periods by resolution', () => {
    const writer = new SeriesWriter();
    const month = 2024 * 12 + 2; // March 2024
    const day = dayNumber('2024-03-05');
    const one = (key: number) => write(writer, [{ key, papers: 1, ri: 1, ris: 1, hri: 0 }]);
    expect(decodeSeries(one(2024), 'yearly').period).toEqual(['2024']);
    expect(decodeSeries(one(month), 'monthly').period).toEqual(['2024-03']);
    expect(decodeSeries(one(day), 'daily').period).toEqual(['2024-03-05']);
    expect(decodeSeries(write(writer, []), 'monthly')).toEqual({
      period: [],
      papers: [],
      ri: [],
      ris: [],
      hri: [],
    });
  });

  it('gives back every value written, many series in one writer, from copies at any offset', () => {
    const row = fc.record({
      key: fc.integer({ min: 1900, max: 2100 }),
      papers: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      ri: fc.double({ noNaN: true }),
      ris: fc.double({ noNaN: true }),
      hri: fc.option(fc.double({ noNaN: true }), { nil: null }),
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(row, { maxLength: 300 }), { minLength: 1, maxLength: 40 }),
        fc.constantFrom<Resolution>(...RESOLUTIONS),
        fc.integer({ min: 0, max: 7 }),
        (all, resolution, offset) => {
          const writer = new SeriesWriter();
          const written = all.map((rows) => write(writer, rows));
          all.forEach((rows, i) => {
            // As SQLite hands a blob back: a Buffer of its own, not necessarily aligned.
            const copy = Buffer.alloc(written[i]!.length + offset).subarray(offset);
            copy.set(written[i]!);
            const s = decodeSeries(copy, resolution);
            expect(s.papers).toEqual(rows.map((r) => r.papers));
            expect(s.ri).toEqual(rows.map((r) => r.ri));
            expect(s.ris).toEqual(rows.map((r) => r.ris));
            expect(s.hri).toEqual(rows.map((r) => r.hri));
            expect(s.period).toHaveLength(rows.length);
          });
        },
      ),
      { numRuns: 60 },
    );
  });

  it('keeps each series whole when the writer moves on to a new chunk of memory', () => {
    const writer = new SeriesWriter();
    const rows = (n: number, base: number) =>
      Array.from({ length: n }, (_, i) => ({
        key: 2000 + (i % 50),
        papers: base + i,
        ri: i / 7,
        ris: base,
        hri: null,
      }));
    // 3 x 60,000 periods x 32 bytes: more than one 4 MB chunk holds.
    const series = [1, 2, 3].map((b) => ({
      rows: rows(60_000, b * 1_000_000),
      bytes: new Uint8Array() as Uint8Array<ArrayBufferLike>,
    }));
    for (const s of series) s.bytes = write(writer, s.rows);
    expect(new Set(series.map((s) => s.bytes.buffer)).size).toBeGreaterThan(1);
    for (const s of series) {
      const got = decodeSeries(s.bytes, 'yearly');
      expect(got.papers).toEqual(s.rows.map((r) => r.papers));
      expect(got.ri).toEqual(s.rows.map((r) => r.ri));
    }
  });

  it('refuses bytes of another layout', () => {
    const bytes = write(new SeriesWriter(), [{ key: 2024, papers: 1, ri: 1, ris: 1, hri: 1 }]);
    expect(() => decodeSeries(bytes.subarray(0, bytes.length - 8), 'yearly')).toThrow(/another layout/);
    expect(() => decodeSeries(Buffer.from('{"period":[]}'), 'yearly')).toThrow(/another layout/);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteWriter, utf8 } from '../../../src/synthetic/byte-writer.js';

/** Any UTF-16 text, lone surrogates included. */
const utf16 = fc
  .array(fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0, max: 0xffff })), { maxLength: 60 })
  .map((units) => String.fromCharCode(...units));

function written(write: (w: ByteWriter) => void): Buffer {
  // a small first buffer, so the writer has to grow
  const w = new ByteWriter(4);
  write(w);
  return Buffer.from(w.bytes.subarray(0, w.length));
}

// The generator's output bytes are pinned: the writer must encode exactly as the string builder's
// Buffer.write did, and print numbers exactly as String() does.
describe('ByteWriter', () => {
  it('encodes text as Buffer does (a lone surrogate becomes U+FFFD)', () => {
    fc.assert(
      fc.property(fc.array(utf16, { maxLength: 5 }), (parts) => {
        const bytes = written((w) => {
          for (const p of parts) w.text(p);
        });
        expect(bytes).toEqual(Buffer.from(parts.join(''), 'utf8'));
      }),
    );
    expect(written((w) => w.text('a\ud800b\udc00😀é–'))).toEqual(Buffer.from('a\ud800b\udc00😀é–'));
  });

  it('prints integers and other numbers as String() does', () => {
    const numbers = fc.oneof(
      fc.nat(),
      fc.maxSafeNat(),
      fc.integer({ min: -1_000_000, max: -1 }),
      fc.double({ noNaN: false }),
      fc.constantFrom(0, -0, 9, 10, 99, 100, 4_294_967_295, 2 ** 53 - 1, 2 ** 53, 1e21),
    );
    fc.assert(
      fc.property(numbers, (n) => {
        expect(written((w) => w.int(n)).toString()).toBe(String(n));
      }),
    );
  });

  it('pads integers with zeros to a width', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.nat(), (width, x) => {
        const n = x % 10 ** width;
        expect(written((w) => w.padded(n, width)).toString()).toBe(String(n).padStart(width, '0'));
      }),
    );
  });

  it('copies fragments and ranges of another writer', () => {
    const other = new ByteWriter(16);
    other.text('0123456789');
    const out = written((w) => {
      w.raw(utf8('{"a":'));
      w.bool(true);
      w.range(other, 2, 5);
      w.raw(utf8('x'.repeat(100)));
    });
    expect(out.toString()).toBe(`{"a":true234${'x'.repeat(100)}`);
  });

  it('keeps fragments intact when their store moves on to a new buffer', () => {
    const texts = Array.from({ length: 3000 }, (_v, i) => `fragment ${i} é ${'y'.repeat(i % 50)}`);
    const fragments = texts.map(utf8);
    fragments.forEach((f, i) => {
      expect(Buffer.from(f).toString()).toBe(texts[i]);
    });
  });
});

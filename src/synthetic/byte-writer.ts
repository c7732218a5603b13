/**
 * UTF-8 text written straight into bytes, for the record builder: fixed JSON fragments are encoded once
 * (`utf8`) and copied, strings are encoded as they are written and integers printed digit by digit, so
 * a record is built without the intermediate strings (and their garbage) a string builder makes.
 */

export class ByteWriter {
  bytes: Uint8Array;
  length = 0;

  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity);
  }

  /** Makes room for n more bytes. */
  reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.length + n) size *= 2;
    const bigger = new Uint8Array(size);
    bigger.set(this.bytes.subarray(0, this.length));
    this.bytes = bigger;
  }

  /** Pre-encoded bytes. */
  raw(fragment: Uint8Array): void {
    const n = fragment.length;
    this.reserve(n);
    const b = this.bytes;
    let p = this.length;
    // a call into set() costs more than copying a short fragment here
    if (n < 24) for (let i = 0; i < n; i++) b[p++] = fragment[i]!;
    else {
      b.set(fragment, p);
      p += n;
    }
    this.length = p;
  }

  /** Bytes [start, end) of another writer. */
  range(from: ByteWriter, start: number, end: number): void {
    this.reserve(end - start);
    this.bytes.set(from.bytes.subarray(start, end), this.length);
    this.length += end - start;
  }

  /** A string, UTF-8 encoded the way Buffer.write encodes it (a lone surrogate becomes U+FFFD). */
  text(s: string): void {
    const n = s.length;
    this.reserve(n * 3);
    const b = this.bytes;
    let p = this.length;
    for (let i = 0; i < n; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        b[p++] = c;
        continue;
      }
      if (c < 0x800) {
        b[p++] = 0xc0 | (c >> 6);
        b[p++] = 0x80 | (c & 0x3f);
        continue;
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        const next = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
          i++;
          b[p++] = 0xf0 | (c >> 18);
          b[p++] = 0x80 | ((c >> 12) & 0x3f);
          b[p++] = 0x80 | ((c >> 6) & 0x3f);
          b[p++] = 0x80 | (c & 0x3f);
          continue;
        }
        c = 0xfffd;
      }
      b[p++] = 0xe0 | (c >> 12);
      b[p++] = 0x80 | ((c >> 6) & 0x3f);
      b[p++] = 0x80 | (c & 0x3f);
    }
    this.length = p;
  }

  /** An integer as JSON prints it (`String(n)`): digit by digit when it is a safe non-negative one. */
  int(n: number): void {
    if (!(n >= 0 && n <= Number.MAX_SAFE_INTEGER && Math.floor(n) === n)) {
      this.text(String(n));
      return;
    }
    let digits = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
    this.reserve(digits);
    const b = this.bytes;
    let p = this.length + digits;
    this.length = p;
    let x = n;
    while (x >= 10) {
      const q = Math.floor(x / 10);
      b[--p] = 48 + (x - q * 10);
      x = q;
    }
    b[--p] = 48 + x;
  }

  /** A non-negative integer below 10^width, with leading zeros to `width` digits. */
  padded(n: number, width: number): void {
    this.reserve(width);
    const b = this.bytes;
    let p = this.length + width;
    this.length = p;
    let x = n;
    for (let i = 0; i < width; i++) {
      const q = Math.floor(x / 10);
      b[--p] = 48 + (x - q * 10);
      x = q;
    }
  }

  /** `true` or `false`. */
  bool(v: boolean): void {
    this.raw(v ? TRUE : FALSE);
  }
}

/**
 * Fragments are views into a few 64 KB buffers: one ArrayBuffer per fragment (TextEncoder.encode) cost
 * more to make than the fragment's bytes, for the tens of thousands a corpus has.
 */
const FRAGMENT_CHUNK = 1 << 16;
const fragments = new ByteWriter(FRAGMENT_CHUNK);

/** The UTF-8 bytes of `s`, for a fragment written many times. */
export function utf8(s: string): Uint8Array {
  if (fragments.length + s.length * 3 > fragments.bytes.length) {
    fragments.bytes = new Uint8Array(Math.max(FRAGMENT_CHUNK, s.length * 3));
    fragments.length = 0;
  }
  const start = fragments.length;
  fragments.text(s);
  return fragments.bytes.subarray(start, fragments.length);
}

const TRUE = utf8('true');
const FALSE = utf8('false');

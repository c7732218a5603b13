/**
 * One page of an OpenAlex list answer (`{"meta": {...}, "results": [{...}, ...]}`) turned into
 * JSON lines for ingest without parsing the records: a byte scan finds where each result starts
 * and ends, so a record's bytes go to the works file as the API sent them. Parsing and re-serialising every record would cost ingest its budget.
 */

export interface WorksPage {
  /** The results as JSON lines: each record's bytes (a view of the page), then a newline. */
  lines: Buffer[];
  /** Their length in all. */
  bytes: number;
  records: number;
  /** meta.next_cursor: null when the list is done. */
  nextCursor: string | null;
  /** meta.count: how many works the whole query matches (for progress). */
  count: number | null;
  /** The highest top-level updated_date among the results ('' when none carries one). */
  maxUpdatedDate: string;
}

export class MalformedPageError extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const RETURN = 0x0d;
const UPDATED_DATE = Buffer.from('updated_date');
const LINE_END = Buffer.from('\n');

/** A word holds a " or a \ (SWAR: a zero byte in x ^ the byte repeated). */
function quoteOrBackslash(x: number): boolean {
  const q = x ^ 0x22222222;
  const b = x ^ 0x5c5c5c5c;
  return ((((q - 0x01010101) & ~q) | ((b - 0x01010101) & ~b)) & 0x80808080) !== 0;
}

/**
 * Index of the quote closing the string whose content starts at `from`. Most of a page is inside
 * strings: they are skipped four bytes at a time (`words` is the page as 32-bit words from byte
 * `base`, the first aligned one) while no byte of the word is a quote or a backslash, then byte
 * by byte. (Strings average under 20 bytes: an indexOf call per string would cost more.)
 */
function closingQuote(buf: Buffer, words: Int32Array, base: number, from: number): number {
  const n = buf.length;
  let i = from;
  for (;;) {
    while (i < n && ((i - base) & 3) !== 0) {
      const c = buf[i]!;
      if (c === QUOTE) return i;
      i += c === BACKSLASH ? 2 : 1;
    }
    if (i >= n) break;
    let k = (i - base) >> 2;
    while (k < words.length && !quoteOrBackslash(words[k]!)) k++;
    i = base + (k << 2);
    for (const stop = Math.min(i + 4, n); i < stop; ) {
      const c = buf[i]!;
      if (c === QUOTE) return i;
      i += c === BACKSLASH ? 2 : 1;
    }
  }
  throw new MalformedPageError('a string runs to the end of the page');
}

export function splitWorksPage(buf: Buffer): WorksPage {
  const base = (4 - (buf.byteOffset & 3)) & 3;
  const words = new Int32Array(buf.buffer, buf.byteOffset + base, Math.max(0, buf.length - base) >> 2);
  const ranges: number[] = [];
  let depth = 0;
  let topKey = '';
  let metaStart = -1;
  let metaEnd = -1;
  let inResults = false;
  let sawResults = false;
  let recordStart = -1;
  let stringStart = -1;
  let stringEnd = -1;
  let wantUpdatedDate = false;
  let maxUpdatedDate = '';
  const n = buf.length;
  let i = 0;
  while (i < n) {
    const b = buf[i]!;
    if (b === QUOTE) {
      const end = closingQuote(buf, words, base, i + 1);
      if (wantUpdatedDate) {
        const value = buf.toString('latin1', i + 1, end);
        if (value > maxUpdatedDate) maxUpdatedDate = value;
        wantUpdatedDate = false;
      }
      stringStart = i + 1;
      stringEnd = end;
      i = end + 1;
      continue;
    }
    // Most other bytes are digits, spaces and literals: one test lets them by ({ [ and } ] differ
    // from each other only in bit 0x20).
    const folded = b | 0x20;
    if (folded !== 0x7b && folded !== 0x7d && b !== COLON && b !== COMMA) {
      i++;
      continue;
    }
    switch (b) {
      case COLON:
        // The string just read is a key: a top-level one, or a key of a result record.
        if (depth === 1) {
          topKey = buf.toString('latin1', stringStart, stringEnd);
          if (topKey === 'meta') metaStart = i + 1;
        } else if (
          depth === 3 &&
          inResults &&
          stringEnd - stringStart === UPDATED_DATE.length &&
          buf.compare(UPDATED_DATE, 0, UPDATED_DATE.length, stringStart, stringEnd) === 0
        ) {
          wantUpdatedDate = true;
        }
        break;
      case 0x7b: // {
      case 0x5b: // [
        depth++;
        wantUpdatedDate = false;
        if (depth === 2 && b === 0x5b && topKey === 'results') {
          inResults = true;
          sawResults = true;
        } else if (depth === 3 && inResults) {
          if (b !== 0x7b) throw new MalformedPageError('a result is not a JSON object');
          recordStart = i;
        }
        break;
      case 0x7d: // }
      case 0x5d: // ]
        if (depth === 3 && inResults) ranges.push(recordStart, i + 1);
        else if (depth === 2 && inResults) inResults = false;
        else if (depth === 2 && topKey === 'meta' && metaStart !== -1 && metaEnd === -1) metaEnd = i + 1;
        depth--;
        if (depth < 0) throw new MalformedPageError('unbalanced brackets');
        break;
      case COMMA:
        wantUpdatedDate = false; // updated_date held a non-string value
        break;
    }
    i++;
  }
  if (depth !== 0) throw new MalformedPageError('the page ends before its last bracket closes');
  if (!sawResults) throw new MalformedPageError('no results array');

  let meta: { next_cursor?: unknown; count?: unknown } = {};
  if (metaStart !== -1 && metaEnd !== -1) {
    try {
      meta = JSON.parse(buf.toString('utf8', metaStart, metaEnd)) as typeof meta;
    } catch {
      throw new MalformedPageError('meta is not JSON');
    }
  }

  // The records as views of the page (no copy), each followed by a newline, for one writev.
  const records = ranges.length / 2;
  const lines: Buffer[] = new Array(ranges.length);
  let bytes = 0;
  for (let r = 0; r < ranges.length; r += 2) {
    const record = buf.subarray(ranges[r]!, ranges[r + 1]!);
    // A pretty-printed answer has line breaks between tokens (never inside strings): spaces keep
    // the record the same JSON on one line.
    if (record.indexOf(NEWLINE) !== -1 || record.indexOf(RETURN) !== -1) {
      for (let k = 0; k < record.length; k++)
        if (record[k] === NEWLINE || record[k] === RETURN) record[k] = 0x20;
    }
    lines[r] = record;
    lines[r + 1] = LINE_END;
    bytes += record.length + 1;
  }
  return {
    lines,
    bytes,
    records,
    nextCursor: typeof meta.next_cursor === 'string' && meta.next_cursor !== '' ? meta.next_cursor : null,
    count: typeof meta.count === 'number' ? meta.count : null,
    maxUpdatedDate,
  };
}

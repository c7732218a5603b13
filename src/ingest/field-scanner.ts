/**
 * Reads only the wanted top-level fields of one JSON object held in a byte range. Real OpenAlex
 * records are ~14 KB, mostly authorships, locations and concepts that the scores never use;
 * JSON.parse of the whole record costs ~3x the time of walking past those values and parsing
 * only the wanted ones (see docs/ingest.md for the measurements).
 *
 * Validation: wanted values go through JSON.parse (strict). Skipped values are checked for
 * structure only (terminated strings, matching brackets, sane scalars), so a truncated or
 * garbled line is still reported as malformed.
 */
export class MalformedJson extends Error {}

const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;
const COLON = 58;
const COMMA = 44;

function isSpace(c: number | undefined): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

function skipSpace(buf: Buffer, i: number, end: number): number {
  while (i < end && isSpace(buf[i])) i++;
  return i;
}

/** Index just past the closing quote of the string starting at i (buf[i] is the opening quote). */
function skipString(buf: Buffer, i: number, end: number): number {
  let q = i + 1;
  for (;;) {
    q = buf.indexOf(QUOTE, q);
    if (q === -1 || q >= end) throw new MalformedJson('unterminated string');
    // The quote is escaped when an odd number of backslashes precede it.
    let b = q - 1;
    while (buf[b] === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    q++;
  }
}

function skipScalar(buf: Buffer, i: number, end: number): number {
  const first = buf[i]!;
  if (!((first >= 48 && first <= 57) || first === 45 || first === 116 || first === 102 || first === 110)) {
    throw new MalformedJson(`unexpected character '${String.fromCharCode(first)}'`);
  }
  let j = i + 1;
  while (j < end) {
    const c = buf[j];
    if (c === COMMA || c === CLOSE_OBJECT || c === CLOSE_ARRAY || isSpace(c)) break;
    j++;
  }
  return j;
}

/** Index just past the value starting at i. */
function skipValue(buf: Buffer, i: number, end: number): number {
  const c = buf[i];
  if (c === QUOTE) return skipString(buf, i, end);
  if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) return skipScalar(buf, i, end);
  // Containers: a stack of expected closers, so `[}` is caught.
  const stack: number[] = [c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY];
  let j = i + 1;
  while (j < end) {
    const d = buf[j]!;
    if (d === QUOTE) {
      j = skipString(buf, j, end);
      continue;
    }
    if (d === OPEN_OBJECT) stack.push(CLOSE_OBJECT);
    else if (d === OPEN_ARRAY) stack.push(CLOSE_ARRAY);
    else if (d === CLOSE_OBJECT || d === CLOSE_ARRAY) {
      if (stack.pop() !== d) throw new MalformedJson('mismatched bracket');
      if (stack.length === 0) return j + 1;
    }
    j++;
  }
  throw new MalformedJson('unexpected end of line inside a value');
}

/**
 * The wanted fields of the JSON object in buf[start, end), parsed; other fields are skipped.
 * Throws MalformedJson (or SyntaxError from a wanted value) when the line is not a JSON object.
 */
export function readFields(buf: Buffer, start: number, end: number, wanted: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let i = skipSpace(buf, start, end);
  if (buf[i] !== OPEN_OBJECT) throw new MalformedJson('not a JSON object');
  i = skipSpace(buf, i + 1, end);
  if (buf[i] === CLOSE_OBJECT) return trailing(buf, i + 1, end, out);
  for (;;) {
    if (buf[i] !== QUOTE) throw new MalformedJson('expected a field name');
    const keyEnd = skipString(buf, i, end);
    const key = buf.toString("latin1", i + 1, keyEnd - 1);
    i = skipSpace(buf, keyEnd, end);
    if (buf[i] !== COLON) throw new MalformedJson(`expected ':' after "${key}"`);
    i = skipSpace(buf, i + 1, end);
    if (i >= end) throw new MalformedJson('unexpected end of line');
    const valueEnd = skipValue(buf, i, end);
    if (wanted.has(key)) out[key] = JSON.parse(buf.toString('utf8', i, valueEnd));
    i = skipSpace(buf, valueEnd, end);
    const c = buf[i];
    if (c === COMMA) {
      i = skipSpace(buf, i + 1, end);
      continue;
    }
    if (c === CLOSE_OBJECT) return trailing(buf, i + 1, end, out);
    throw new MalformedJson(i >= end ? 'unexpected end of line' : `expected ',' or '}' after "${key}"`);
  }
}

function trailing(buf: Buffer, i: number, end: number, out: Record<string, unknown>): Record<string, unknown> {
  if (skipSpace(buf, i, end) !== end) throw new MalformedJson('text after the end of the object');
  return out;
}

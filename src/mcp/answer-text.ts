import { encode } from '@toon-format/toon';

/**
 * A tool's answer as the text a model reads: TOON (Token-Oriented Object Notation,
 * toonformat.dev), where a list of records is a table whose columns are named once. Every value
 * of the answer is kept; a list of plain values inside a table row (a paper's elements, its
 * keywords) is written as one cell, its items joined by commas (when none holds a comma), so that the row stays a table
 * row (cells are separated by `|`). About a third fewer tokens than the JSON for a list of papers.
 */
export function answerText(answer: unknown): string {
  return encode(tableReady(answer), { delimiter: '|' });
}

/** The answer with each list of plain values inside a list of records joined into one string. */
export function tableReady(value: unknown, inRow = false): unknown {
  if (Array.isArray(value)) {
    if (inRow && value.every(isPlain) && !value.some((v) => String(v).includes(','))) return value.join(',');
    return value.map((item) =>
      item !== null && typeof item === 'object' && !Array.isArray(item) ? rowReady(item) : tableReady(item),
    );
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, tableReady(v)]));
  }
  return value;
}

function rowReady(record: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, tableReady(v, true)]));
}

function isPlain(v: unknown): boolean {
  return v === null || typeof v !== 'object';
}

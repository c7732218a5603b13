/**
 * A whole-corpus column (paper-columns.ts) in table paper_columns: one row, or parts when it is
 * larger than one SQLite blob may be (SQLITE_MAX_LENGTH, 1e9 bytes; the references reach it at
 * about 10M works).
 */

/** The largest blob of one column's row: a column above it is stored in parts. A multiple of 8. */
const COLUMN_PART_BYTES = 256 * 1024 * 1024;

/**
 * The rows of table paper_columns that store one column: one row under its name, or, above
 * COLUMN_PART_BYTES, parts `NAME#0`, `NAME#1`... in order, none under the plain name (so a reader
 * that knows no parts finds the column missing, never a part of it).
 */
export function paperColumnRows(
  name: string,
  bytes: Buffer,
  partBytes = COLUMN_PART_BYTES,
): [string, Buffer][] {
  return paperColumnParts(name, bytes.length, partBytes).map(({ row, start, end }) => [
    row,
    bytes.subarray(start, end),
  ]);
}

/** A column part: its row's name and its bytes' range in the column. */
export interface ColumnPart {
  row: string;
  start: number;
  end: number;
}

/**
 * The rows (as paperColumnRows names them) of a column of `length` bytes, for a writer that
 * makes the column part by part rather than whole.
 */
export function paperColumnParts(name: string, length: number, partBytes = COLUMN_PART_BYTES): ColumnPart[] {
  if (length <= partBytes) return [{ row: name, start: 0, end: length }];
  const parts: ColumnPart[] = [];
  for (let at = 0, k = 0; at < length; at += partBytes, k++)
    parts.push({ row: `${name}#${k}`, start: at, end: Math.min(length, at + partBytes) });
  return parts;
}

/** One column's rows (whole, or its parts in order) from table paper_columns; its parameter: { name }. */
export const PAPER_COLUMN_SQL = (table = 'paper_columns') =>
  `SELECT data FROM ${table} WHERE name = @name OR name GLOB @name || '#[0-9]*' ORDER BY length(name), name`;

/** A column's bytes from its rows (PAPER_COLUMN_SQL): undefined when it has none. */
export function joinedColumn(parts: readonly Buffer[]): Buffer | undefined {
  if (parts.length <= 1) return parts[0];
  return Buffer.concat(parts as Buffer[]);
}

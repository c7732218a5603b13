import type Database from 'better-sqlite3';

/**
 * A whole-corpus column (paper-columns.ts) in table paper_columns: one row, or parts when it is
 * larger than one SQLite blob may be (SQLITE_MAX_LENGTH, 1e9 bytes; the references reach it at
 * about 10M works).
 */

/**
 * The largest blob of one column's row: a column above it is stored in parts. A multiple of 8.
 * SQLite reads a blob whole, and better-sqlite3 copies it into a Buffer, so a reader going through
 * a column part by part (an incremental build, the previous snapshot's references) holds about
 * twice this: at 256 MB that was 0.7 GB of a 10M update's peak.
 */
const COLUMN_PART_BYTES = 32 * 1024 * 1024;

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

/** The rows of one column (whole, or its parts); its parameter: { name }. */
const COLUMN_ROWS = `name = @name OR name GLOB @name || '#[0-9]*'`;

/** One column's rows (whole, or its parts in order) from table paper_columns; its parameter: { name }. */
const PAPER_COLUMN_SQL = (table = 'paper_columns') =>
  `SELECT data FROM ${table} WHERE ${COLUMN_ROWS} ORDER BY length(name), name`;

/** One column's length in bytes, all its parts (SQLite reads a blob's length from its record header). */
const PAPER_COLUMN_BYTES_SQL = (table = 'paper_columns') =>
  `SELECT coalesce(sum(length(data)), 0) FROM ${table} WHERE ${COLUMN_ROWS}`;

/**
 * A column's bytes from its rows (PAPER_COLUMN_SQL, read one at a time) and their total length:
 * undefined when it has none. One row is the column as read; parts are copied in turn into one
 * buffer of shared memory, so that the column is never held twice (the references reach 1 GB at
 * 10M works) and a worker pool shares it as it is (inSharedMemory copies nothing).
 */
export function joinedColumn(parts: Iterable<Buffer>, totalBytes: number): Buffer | undefined {
  let first: Buffer | undefined;
  let out: Buffer | undefined;
  let at = 0;
  for (const part of parts) {
    if (first === undefined) {
      first = part;
      continue;
    }
    if (out === undefined) {
      out = Buffer.from(new SharedArrayBuffer(totalBytes));
      at = first.copy(out, 0);
    }
    if (at + part.length > totalBytes) at += part.length;
    else at += part.copy(out, at);
  }
  if (out && at !== totalBytes) throw new Error(`a column's parts hold ${at} bytes, not ${totalBytes}`);
  return out ?? first;
}

/** One column of `table` (paper_columns, or an attached snapshot's) read with joinedColumn. */
export function readPaperColumnBytes(
  db: Database.Database,
  name: string,
  table = 'paper_columns',
): Buffer | undefined {
  return joinedColumn(
    paperColumnBlobs(db, name, table),
    db.prepare(PAPER_COLUMN_BYTES_SQL(table)).pluck().get({ name }) as number,
  );
}

/** One column's rows (whole, or its parts in order), one blob at a time. */
export function paperColumnBlobs(
  db: Database.Database,
  name: string,
  table = 'paper_columns',
): Iterable<Buffer> {
  return db.prepare(PAPER_COLUMN_SQL(table)).pluck().iterate({ name }) as Iterable<Buffer>;
}

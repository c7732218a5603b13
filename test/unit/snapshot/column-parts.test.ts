import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { joinedColumn, paperColumnRows, readPaperColumnBytes } from '../../../src/snapshot/column-parts.js';
import { SNAPSHOT_SCHEMA } from '../../../src/snapshot/schema.js';

describe('whole-corpus columns larger than one SQLite blob', () => {
  let db: Database.Database | undefined;
  afterEach(() => db?.close());

  /** A snapshot's tables in memory, with the given columns written as the build writes them. */
  function snapshotWith(columns: [string, Buffer][], partBytes: number): Database.Database {
    db = new Database(':memory:');
    db.exec(SNAPSHOT_SCHEMA);
    const insert = db.prepare('INSERT INTO paper_columns VALUES (?, ?)');
    for (const [name, bytes] of columns)
      for (const [row, part] of paperColumnRows(name, bytes, partBytes)) insert.run(row, part);
    return db;
  }
  const read = (d: Database.Database, name: string) => readPaperColumnBytes(d, name);
  const int32Bytes = (n: number, from: number) =>
    Buffer.from(Int32Array.from({ length: n }, (_, i) => from + i).buffer);

  it('a column at or under the part size is one row under its own name', () => {
    expect(paperColumnRows('year', Buffer.alloc(16), 16).map(([name]) => name)).toEqual(['year']);
  });

  it('a larger one is parts NAME#0.. in order, and none under the plain name', () => {
    const rows = paperColumnRows('refs', int32Bytes(10, 0), 16);
    expect(rows.map(([name]) => name)).toEqual(['refs#0', 'refs#1', 'refs#2']);
    expect(rows.map(([, part]) => part.length)).toEqual([16, 16, 8]);
  });

  it('reads back the same bytes, parts in numeric order (#10 after #9), beside a column of a longer name', () => {
    const refs = int32Bytes(50, 1000); // 200 bytes in 13 parts of 16
    const refsStart = int32Bytes(7, 0);
    const d = snapshotWith(
      [
        ['refs', refs],
        ['refs_start', refsStart],
      ],
      16,
    );
    expect(d.prepare("SELECT count(*) FROM paper_columns WHERE name GLOB 'refs#*'").pluck().get()).toBe(13);
    expect(read(d, 'refs')?.equals(refs)).toBe(true);
    expect(read(d, 'refs_start')?.equals(refsStart)).toBe(true);
    expect(new Int32Array(new Uint8Array(read(d, 'refs')!).buffer)[49]).toBe(1049);
  });

  it('a column in parts is read into shared memory, which a worker pool shares without a copy', () => {
    const d = snapshotWith(
      [
        ['refs', int32Bytes(50, 0)],
        ['year', Buffer.alloc(8)],
      ],
      16,
    );
    expect(read(d, 'refs')!.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(read(d, 'year')!.buffer).not.toBeInstanceOf(SharedArrayBuffer);
  });

  it('refuses parts that do not add up to the length their rows give', () => {
    expect(() => joinedColumn([Buffer.alloc(16), Buffer.alloc(8)], 32)).toThrow(/24 bytes, not 32/);
    expect(() => joinedColumn([Buffer.alloc(16), Buffer.alloc(8)], 20)).toThrow(/24 bytes, not 20/);
  });

  it('a column the snapshot does not hold reads as undefined', () => {
    const d = snapshotWith([['year', Buffer.alloc(4)]], 16);
    expect(read(d, 'refs')).toBeUndefined();
  });
});

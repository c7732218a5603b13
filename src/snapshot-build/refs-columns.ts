import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { CorpusStore } from '../ingest/corpus-store.js';
import { REF_PAIRS_SQL, type RefsDelta, sortRange } from '../scoring/corpus.js';
import { paperColumnBlobs, paperColumnParts, readPaperColumnBytes } from '../snapshot/column-parts.js';
import { CHECKPOINT_PAPERS, PackedValues, packedBytes, packPaper } from '../snapshot/packed-refs.js';
import { typedArrayOf } from '../snapshot/paper-columns.js';
import { releaseFreeMemory } from '../util/release-memory.js';

/**
 * The in-corpus references, read from the corpus store into a file (each paper's cited ordinals
 * ascending, papers in ordinal order: the values of the snapshot's refs column) and each paper's
 * start in it (refs_start), instead of loaded (0.9 GB at 10M works).
 */
export interface StagedRefs {
  start: Int32Array;
  file: string;
}

/** Values written to the staging file at a time. */
const STAGE_VALUES = 1 << 18;

/** The staging file being written: values appended in ordinal order, counted per paper. */
class RefsFile {
  readonly start: Int32Array;
  private readonly buffer = new Int32Array(STAGE_VALUES);
  private filled = 0;
  private readonly fd: number;

  constructor(
    n: number,
    readonly file: string,
  ) {
    this.start = new Int32Array(n + 1);
    this.fd = openSync(file, 'w');
  }

  /** Appends one reference of paper `o` (papers in ordinal order). */
  add(o: number, v: number): void {
    this.start[o + 1]!++;
    this.buffer[this.filled++] = v;
    if (this.filled === STAGE_VALUES) this.flush();
  }

  private flush(): void {
    const bytes = new Uint8Array(this.buffer.buffer, 0, this.filled * 4);
    for (let at = 0; at < bytes.length; ) at += writeSync(this.fd, bytes, at);
    this.filled = 0;
  }

  /** The staged references, once every paper's are added. */
  finish(): StagedRefs {
    this.flush();
    const { start } = this;
    for (let p = 0; p + 1 < start.length; p++) start[p + 1]! += start[p]!;
    return { start, file: this.file };
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * Stages the references (StagedRefs) from one read of the pairs in (citing, cited) order. Made
 * while the corpus is loaded, not while the snapshot is written: DuckDB's working memory (a few
 * hundred MB at any size) then does not add to the writer's and the scoring's.
 */
export async function stageRefs(store: CorpusStore, n: number, file: string): Promise<StagedRefs> {
  return staged(new RefsFile(n, file), (out) =>
    store.forEachChunk(`SELECT o, v FROM (${REF_PAIRS_SQL}) AS pairs(o, v) ORDER BY o, v`, (chunk) => {
      const [o, v] = [chunk.getColumnVector(0), chunk.getColumnVector(1)];
      for (let i = 0; i < chunk.rowCount; i++) out.add(o.getItem(i) as number, v.getItem(i) as number);
    }),
  );
}

async function staged(out: RefsFile, fill: (out: RefsFile) => Promise<void>): Promise<StagedRefs> {
  try {
    await fill(out);
    return out.finish();
  } finally {
    out.close();
  }
}

/** The snapshot built with the build cache, and how the cache's papers map to the corpus now. */
export interface PreviousRefs {
  /** The snapshot file (its refs columns are in the cache's ordinal order). */
  snapshot: string;
  /** Each paper's ordinal in the cache when its work is unchanged since, else -1. */
  cachedOrdinal: Int32Array;
  /** Each paper's work id now: the snapshot's must agree for every unchanged one. */
  workId: Float64Array;
  delta: RefsDelta;
  /** Told once the store's pairs (the changed works' and those to new works) are read. */
  onFreshRead?: (pairs: number) => void;
}

/**
 * Stages the references as stageRefs does, from those of the snapshot built with the build cache
 * brought up to date: an unchanged work keeps its references, each to the cited work's ordinal
 * now (one to a work gone is dropped), and gains those to works new to the corpus; a changed
 * work's are read again. The store is read for the changed works and the new ones alone (reading
 * every reference again took 90 s of a 10M update). The previous snapshot's references are read
 * a part at a time (column-parts.ts), so its column is never whole in memory. Null when the
 * snapshot is not the one built with the cache (its papers are not the cache's).
 */
export async function stageRefsFrom(
  store: CorpusStore,
  n: number,
  file: string,
  previous: PreviousRefs,
): Promise<StagedRefs | null> {
  const { target, changedIds, addedIds } = previous.delta;
  const db = new Database(previous.snapshot, { readonly: true, fileMustExist: true });
  let parts: Iterator<Buffer> | undefined;
  try {
    const startBytes = readPaperColumnBytes(db, 'refs_start');
    const oldStart = startBytes && typedArrayOf(Int32Array, startBytes);
    // A snapshot before schema 11 has its references unpacked: read in full.
    const packedRows = db
      .prepare(`SELECT count(*) FROM paper_columns WHERE name GLOB 'refs_packed*'`)
      .pluck()
      .get();
    if (!packedRows || !oldStart || oldStart.length !== target.length + 1 || !sameWorks(db, previous))
      return null;
    const [freshFrom, freshTo] = await freshRefPairs(store, changedIds, addedIds);
    previous.onFreshRead?.(freshFrom!.length);
    // What DuckDB's joins over every reference kept (about 0.8 GB at 10M) let go before the
    // previous snapshot's references are read beside the build's columns.
    await store.releaseCache();
    releaseFreeMemory();
    parts = paperColumnBlobs(db, 'refs_packed')[Symbol.iterator]();
    const old = new PackedValues(parts, oldStart);
    return await staged(new RefsFile(n, file), async (out) => {
      let f = 0;
      let paper: Int32Array<ArrayBufferLike> = new Int32Array(1024);
      for (let p = 0; p < n; p++) {
        let count = 0;
        const q = previous.cachedOrdinal[p]!;
        if (q >= 0) {
          const [from, to] = [oldStart[q]!, oldStart[q + 1]!];
          if (to - from > paper.length) paper = new Int32Array(2 * (to - from));
          for (let i = from; i < to; i++) {
            const now = target[old.at(i)]!;
            if (now >= 0) paper[count++] = now;
          }
        }
        for (; f < freshFrom!.length && freshFrom![f] === p; f++) {
          if (count === paper.length) paper = grown(paper);
          paper[count++] = freshTo![f]!;
        }
        // Mostly in order already: the cited works that stay keep their order.
        sortRange(paper, 0, count);
        for (let i = 0; i < count; i++) out.add(p, paper[i]!);
      }
      if (f !== freshFrom!.length) throw new Error('the corpus store changed while the build read it');
    });
  } finally {
    parts?.return?.(); // the statement let go before its connection closes
    db.close();
  }
}

/** Whether each unchanged paper's work is the one at its cached ordinal in the snapshot. */
function sameWorks(db: Database.Database, { cachedOrdinal, workId }: PreviousRefs): boolean {
  const bytes = readPaperColumnBytes(db, 'work_id');
  if (!bytes) return false;
  const was = typedArrayOf(Float64Array, bytes);
  for (let p = 0; p < cachedOrdinal.length; p++) {
    const q = cachedOrdinal[p]!;
    if (q >= 0 && was[q] !== workId[p]) return false;
  }
  return true;
}

/**
 * The (citing, cited) pairs, ordered, of the references the cache cannot give: the changed works'
 * own, and the unchanged works' to works new to the corpus.
 */
async function freshRefPairs(
  store: CorpusStore,
  changedIds: Float64Array,
  addedIds: Float64Array,
): Promise<Int32Array[]> {
  await store.idTable('refs_changed', changedIds);
  await store.idTable('refs_added', addedIds);
  try {
    return await store.intColumns(
      `SELECT o, v FROM (
        SELECT a.o, b.o FROM (SELECT id, unnest(refs) AS ref FROM works WHERE id IN (SELECT id FROM refs_changed)) u
          JOIN ord a ON a.id = u.id JOIN ord b ON b.id = u.ref WHERE a.o <> b.o
        UNION ALL
        SELECT a.o, b.o FROM (SELECT id, unnest(refs) AS ref FROM works WHERE id NOT IN (SELECT id FROM refs_changed)) u
          JOIN refs_added ON refs_added.id = u.ref JOIN ord a ON a.id = u.id JOIN ord b ON b.id = u.ref
      ) AS pairs(o, v) ORDER BY o, v`,
      2,
    );
  } finally {
    await store.con.run('DROP TABLE IF EXISTS refs_changed; DROP TABLE IF EXISTS refs_added');
  }
}

/** Twice as long, the values kept. */
function grown(a: Int32Array): Int32Array<ArrayBufferLike> {
  const out = new Int32Array(2 * a.length);
  out.set(a);
  return out;
}

/** Each staged paper's values in turn (a view, valid until the next), read a few MB at a time. */
function* stagedPapers(refs: StagedRefs): Generator<Int32Array> {
  const { start } = refs;
  let buffer = new Int32Array(STAGE_VALUES);
  const fd = openSync(refs.file, 'r');
  try {
    // buffer holds values [base, base + filled) of the file.
    let base = 0;
    let filled = 0;
    for (let p = 0; p + 1 < start.length; p++) {
      const [from, to] = [start[p]!, start[p + 1]!];
      if (to > base + filled) {
        // Keep this paper's first values, read on from there.
        buffer.copyWithin(0, from - base, filled);
        filled -= from - base;
        base = from;
        if (to - from > buffer.length) {
          const grown = new Int32Array(2 * (to - from));
          grown.set(buffer.subarray(0, filled));
          buffer = grown;
        }
        const bytes = new Uint8Array(buffer.buffer);
        const want = Math.min(buffer.length, start[start.length - 1]! - base) * 4;
        for (let at = filled * 4; at < want; ) {
          const got = readSync(fd, bytes, at, want - at, base * 4 + at);
          if (got === 0) throw new Error('the staged references are truncated');
          at += got;
        }
        filled = want / 4;
      }
      yield buffer.subarray(from - base, to - base);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The snapshot's columns of references (packed-refs.ts): refs_start, refs_checkpoints and
 * refs_packed, from the staged references in two reads of the file (the first sizes the packed
 * column and its checkpoints, the second packs it a part at a time into one buffer). `insert`
 * writes one row of paper_columns.
 */
export function writeRefsColumns(
  refs: StagedRefs,
  insert: (row: string, bytes: Buffer) => void,
  partBytes?: number,
): void {
  const { start } = refs;
  const n = start.length - 1;
  const checkpoints = new Float64Array(Math.ceil(n / CHECKPOINT_PAPERS));
  let total = 0;
  let p = 0;
  for (const values of stagedPapers(refs)) {
    if (p % CHECKPOINT_PAPERS === 0) checkpoints[p / CHECKPOINT_PAPERS] = total;
    total += packedBytes(values, 0, values.length);
    p++;
  }
  const column = (name: string, bytes: Buffer) => {
    for (const { row, start: from, end } of paperColumnParts(name, bytes.length, partBytes))
      insert(row, bytes.subarray(from, end));
  };
  column('refs_start', Buffer.from(start.buffer, start.byteOffset, start.byteLength));
  column('refs_checkpoints', Buffer.from(checkpoints.buffer));
  const parts = paperColumnParts('refs_packed', total, partBytes);
  const part = Buffer.allocUnsafe(parts[0]!.end);
  let paper = new Uint8Array(1024);
  let k = 0;
  let filled = 0;
  for (const values of stagedPapers(refs)) {
    // A varint takes at most 5 bytes.
    if (5 * values.length > paper.length) paper = new Uint8Array(10 * values.length);
    const bytes = packPaper(values, 0, values.length, paper, 0);
    // Into the part, flushed each time it is full (a paper's bytes may run into the next part).
    for (let at = 0; at < bytes; ) {
      const size = parts[k]!.end - parts[k]!.start;
      const take = Math.min(bytes - at, size - filled);
      part.set(paper.subarray(at, at + take), filled);
      filled += take;
      at += take;
      if (filled === size) {
        insert(parts[k]!.row, part.subarray(0, size));
        k++;
        filled = 0;
      }
    }
  }
  if (total === 0) insert(parts[0]!.row, part.subarray(0, 0));
  else if (k !== parts.length) throw new Error('the packed references are shorter than they were sized');
}

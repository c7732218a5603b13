import { existsSync } from 'node:fs';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { workerFile } from '../util/worker-file.js';
import { pageChecksums } from './page-checksums.js';

/**
 * What FTS5's bm25 reads of the titles, read once per snapshot into memory: each title's token
 * count, each term's number of titles, and the (rare) titles that hold a term more than once.
 * With them research ranks a question's title matches itself (core/research/title-ranking.ts)
 * instead of FTS5's bm25, which looks each matching title's token count up in the index (0.7 us a title:
 * 20-30 ms for a common two-word question at 1M works). Read in a thread of its own (about 3 s
 * of CPU at 1M works), so no question waits for it; until it is there, FTS5 ranks.
 */
export interface TitleStats {
  /** The titles' tokenizer, as the snapshot's full-text index names it. */
  tokenizer: string;
  /** Token count of each title by ordinal (ordinals 0 .. n-1). */
  tokens: Uint16Array;
  /** The most tokens of any title. */
  maxTokens: number;
  /** Titles (rows of the index) and their tokens in all: bm25's N and average length. */
  rows: number;
  totalTokens: number;
  /** Titles holding each term (bm25's nHit), by the index's (stemmed) term. */
  titlesWith: Map<string, number>;
  /** Titles that hold a term more than once, by term: their ordinals (ascending) and counts. */
  repeats: Map<string, RepeatedIn>;
}

/** The titles holding a term more than once, and how often each holds it. */
interface RepeatedIn {
  ordinals: Int32Array;
  counts: Uint16Array;
}

/** A SQLite varint (big-endian groups of 7 bits), as FTS5 stores a title's token count. */
export function varint(b: Uint8Array): number {
  let v = 0;
  for (const byte of b) {
    v = v * 128 + (byte & 0x7f);
    if (byte < 0x80) break;
  }
  return v;
}

/** Reads the statistics of the snapshot open on `db` (the `papers_fts` index); synchronous. */
export function readTitleStats(db: Database.Database): TitleStats {
  const definition = db
    .prepare("SELECT sql FROM sqlite_master WHERE name = 'papers_fts'")
    .pluck()
    .get() as string;
  // FTS5's own default when the index names none.
  const tokenizer = /tokenize\s*=\s*'([^']*)'/.exec(definition)?.[1] ?? 'unicode61';
  const [lo, hi, count] = db
    .prepare('SELECT min(id), max(id), count(*) FROM papers_fts_docsize')
    .raw()
    .get() as [number | null, number | null, number];
  const n = (hi ?? -1) + 1;
  const tokens = new Uint16Array(Math.max(0, n));
  const contiguous = count > 0 && lo === 0 && hi === count - 1;
  if (contiguous) {
    // One hex pair a title when its count fits one byte (nearly always): one string from SQLite.
    const hex = db
      .prepare(
        "SELECT group_concat(CASE WHEN length(sz) = 1 THEN hex(sz) ELSE '00' END, '') FROM (SELECT sz FROM papers_fts_docsize ORDER BY id)",
      )
      .pluck()
      .get() as string;
    tokens.set(Buffer.from(hex, 'hex'));
  }
  // The counts not read above: the longer ones, or every one when the ids have gaps.
  const rest = `SELECT id, sz FROM papers_fts_docsize${contiguous ? ' WHERE length(sz) > 1' : ''}`;
  for (const [id, sz] of db.prepare(rest).raw().iterate() as Iterable<[number, Buffer]>)
    tokens[id] = varint(sz);
  let totalTokens = 0;
  let maxTokens = 0;
  for (const t of tokens) {
    totalTokens += t;
    if (t > maxTokens) maxTokens = t;
  }

  const temp = `ri_title_vocab_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  db.exec(`CREATE VIRTUAL TABLE temp.${temp}_row USING fts5vocab(main, papers_fts, row)`);
  db.exec(`CREATE VIRTUAL TABLE temp.${temp}_instance USING fts5vocab(main, papers_fts, instance)`);
  try {
    const titlesWith = new Map<string, number>();
    const repeated: string[] = [];
    const vocab = db.prepare(`SELECT term, doc, cnt FROM temp.${temp}_row`).raw().iterate() as Iterable<
      [string, number, number]
    >;
    for (const [term, doc, cnt] of vocab) {
      titlesWith.set(term, doc);
      if (cnt > doc) repeated.push(term);
    }
    // Only the terms some title holds twice (instances > titles) are scanned instance by instance.
    const repeatsOf = db
      .prepare(
        `SELECT doc, count(*) AS c FROM temp.${temp}_instance WHERE term = ? GROUP BY doc HAVING c > 1`,
      )
      .raw();
    const repeats = new Map<string, RepeatedIn>();
    for (const term of repeated) {
      const rows = repeatsOf.all(term) as [number, number][];
      repeats.set(term, {
        ordinals: Int32Array.from(rows, (r) => r[0]),
        counts: Uint16Array.from(rows, (r) => r[1]),
      });
    }
    return { tokenizer, tokens, maxTokens, rows: count, totalTokens, titlesWith, repeats };
  } finally {
    db.exec(`DROP TABLE temp.${temp}_row; DROP TABLE temp.${temp}_instance`);
  }
}

/** Statistics being read in a thread of their own: `take()` says whether they are there. */
export interface PendingTitleStats {
  /** The statistics once read, 'failed' when they cannot be, undefined while being read. */
  take(): TitleStats | 'failed' | undefined;
  /** Stops the reading (the snapshot is closed); take() then says 'failed'. */
  stop(): void;
}

/**
 * Starts reading the statistics of the snapshot file at `path` in a thread of its own, on a
 * connection of its own. The answer is taken without the event loop (receiveMessageOnPort): a
 * pool worker that waits for its next task on Atomics never runs it between tasks.
 */
export function startTitleStats(path: string): PendingTitleStats {
  const file = workerFile(import.meta.url, './title-stats-worker.js');
  if (!existsSync(file)) return { take: () => 'failed', stop: () => {} };
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(file, { workerData: { path, port: port2 }, transferList: [port2] });
  // A background read: it must not keep a process that is otherwise done alive.
  worker.unref();
  port1.unref();
  let result: TitleStats | 'failed' | undefined;
  return {
    take() {
      if (result === undefined) {
        const reply = receiveMessageOnPort(port1)?.message as TitleStatsReply | undefined;
        if (reply) {
          result = reply.ok ? reply.stats : 'failed';
          port1.close();
        }
      }
      return result;
    },
    stop() {
      if (result === undefined) {
        result = 'failed';
        port1.close();
        void worker.terminate();
      }
    },
  };
}

export type TitleStatsReply = { ok: true; stats: TitleStats } | { ok: false; error: string };

/** The worker's body (title-stats-worker.ts). */
export function titleStatsOfFile(path: string): TitleStats {
  // Its pages checked as they are read, as the served connection's are.
  pageChecksums();
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    // Scans in index order: a small cache (a page read once is not read again).
    db.pragma('cache_size = -2048');
    return readTitleStats(db);
  } finally {
    db.close();
  }
}

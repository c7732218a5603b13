import { existsSync, rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import {
  BY_LENGTH_SHIFT,
  PAPERS_BY_LENGTH,
  PAPERS_FTS,
  PAPERS_REPEATS,
  REPEATS_LEFT_OUT,
  repeatMarker,
} from '../snapshot/schema.js';
import { varint } from '../snapshot/title-stats.js';
import { getOrCreate } from '../util/maps.js';
import { workerFile } from '../util/worker-file.js';
import { buildTopicTerms, type TopicTermsInput } from './topic-terms.js';

/**
 * The titles' full-text index (papers_fts), built in a thread of its own while the writer goes on
 * with the rest of the snapshot: the titles are copied from the written paper rows into a side
 * file (ordinal and title alone), indexed there by the same FTS5 declaration, and the index's
 * tables are then copied into the snapshot at a fixed point of the write, so the file has the same
 * bytes whichever thread is first. At 1M works the index took 2.1-2.2 s of the writer's thread;
 * the copy takes about 0.2 s of it, and the index of the narrow side table is built faster.
 * The titles by length (schema.ts's PAPERS_BY_LENGTH, PAPERS_REPEATS), from which research ranks
 * a common question's best titles, are built after it in the same thread, from its token counts.
 * What the titles teach of their communities (topic-terms.ts) is counted meanwhile in a thread of
 * its own, from the snapshot's titles into a second side file, copied in with the index: in the
 * index's thread it held the writer up to 2 s at 1M works, a core idle meanwhile.
 */

/**
 * FTS5's own tables behind papers_fts (external content: the titles stay in the paper rows) and
 * behind the titles by length (contentless: terms alone).
 */
const INDEX_TABLES = [
  ...['data', 'idx', 'docsize', 'config'].map((t) => `papers_fts_${t}`),
  ...['papers_by_length', 'papers_repeats'].flatMap((f) => ['data', 'idx', 'config'].map((t) => `${f}_${t}`)),
];
/** The topic model's tables (topic-terms.ts), copied with the index. */
const TOPIC_TABLES = ['topic_terms', 'topic_lengths'];

/** The side file beside a snapshot being written (removed with it; see publish.ts's prune). */
export const titleIndexFile = (snapshotPath: string) => `${snapshotPath}-titles`;
/** The topic model's side file beside the index's (removed with it). */
export const topicTermsFile = (sidePath: string) => `${sidePath}-topics`;

/**
 * Builds the index in the side file from the paper rows of the snapshot at `snapshotPath`, then
 * the topic model from its titles and `topics` in the topic model's side file; `onTitlesRead` is
 * called once the titles are copied (the snapshot is only read until then).
 */
export function buildTitleIndex(
  snapshotPath: string,
  sidePath: string,
  onTitlesRead: () => void,
  topics: TopicTermsInput = { clusters: new Int32Array(0), texts: [] },
): void {
  buildIndex(snapshotPath, sidePath, () => {});
  buildTopicTermsFile(snapshotPath, topicTermsFile(sidePath), () => {}, topics);
  onTitlesRead();
}

/** The index alone, in the side file (see buildTitleIndex). */
export function buildIndex(snapshotPath: string, sidePath: string, onTitlesRead: () => void): void {
  rmSync(sidePath, { force: true });
  const db = new Database(sidePath);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('page_size = 8192');
    db.pragma('cache_size = -16384'); // the pages are written once, in order: a small cache does
    db.exec(`CREATE TABLE papers (ordinal INTEGER PRIMARY KEY, title TEXT); ${PAPERS_FTS}`);
    db.prepare('ATTACH ? AS snapshot').run(snapshotPath);
    db.exec('INSERT INTO main.papers SELECT ordinal, title FROM snapshot.papers ORDER BY ordinal');
    db.exec('DETACH snapshot');
    onTitlesRead();
    // One segment, pages as large as the file's: FTS5 flushes a segment each time its pending
    // terms pass `hashsize` (1 MB by default: nine segments at 1M works, merged as they came),
    // and its default `pgsz` (4,050 bytes) fits 4 KB pages. One segment is also one for
    // research's queries to read instead of nine.
    db.exec(`INSERT INTO papers_fts (papers_fts, rank) VALUES ('hashsize', ${64 << 20})`);
    db.exec("INSERT INTO papers_fts (papers_fts, rank) VALUES ('pgsz', 8000)");
    db.exec("INSERT INTO papers_fts (papers_fts) VALUES ('rebuild')");
    buildByLength(db);
  } finally {
    db.close();
  }
}

/**
 * The titles again, by length (schema.ts's PAPERS_BY_LENGTH and PAPERS_REPEATS), from the paper
 * rows and the token counts papers_fts holds (the ones its bm25 reads), each inserted in row id
 * order (FTS5 writes a segment whenever a row id is not above the last one).
 */
function buildByLength(db: Database.Database): void {
  db.exec(`${PAPERS_BY_LENGTH}; ${PAPERS_REPEATS}`);
  for (const table of ['papers_by_length', 'papers_repeats']) {
    db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('hashsize', ${64 << 20})`);
    db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('pgsz', 8000)`);
  }
  // A token count is one varint: one byte below 128 (read as the character it is), else decoded here.
  db.function('title_tokens', { deterministic: true }, (sz: unknown) => varint(sz as Buffer));
  const tokens =
    'CASE WHEN length(sz) = 1 THEN coalesce(unicode(CAST(sz AS TEXT)), 0) ELSE title_tokens(sz) END';
  // Each title's row id, ordered as a table's key, then the titles joined to it in that order
  // (sorting the titles themselves spilled to disk).
  db.exec(`CREATE TEMP TABLE by_length (id INTEGER PRIMARY KEY, ordinal INTEGER NOT NULL);
    INSERT INTO temp.by_length SELECT (${tokens}) * ${BY_LENGTH_SHIFT} + id, id FROM papers_fts_docsize;
    INSERT INTO papers_by_length (rowid, title)
      SELECT l.id, p.title FROM temp.by_length l JOIN papers p ON p.ordinal = l.ordinal WHERE p.title IS NOT NULL
      ORDER BY l.id`);
  db.exec('CREATE TEMP TABLE title_repeats (ordinal INTEGER PRIMARY KEY, markers TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO temp.title_repeats VALUES (?, ?)');
  db.transaction(() => {
    for (const [ordinal, markers] of repeatMarkers(db)) insert.run(ordinal, markers.join(' '));
  })();
  db.exec(
    `INSERT INTO papers_repeats (rowid, title, repeated)
     SELECT l.id, p.title, r.markers FROM temp.by_length l JOIN temp.title_repeats r ON r.ordinal = l.ordinal
     JOIN papers p ON p.ordinal = l.ordinal ORDER BY l.id`,
  );
  db.exec('DROP TABLE temp.title_repeats; DROP TABLE temp.by_length');
}

/**
 * The markers of the titles holding a term more than once (other than REPEATS_LEFT_OUT), by
 * ordinal: each such term's, and its with how often the title holds it.
 */
function repeatMarkers(db: Database.Database): Map<number, string[]> {
  db.exec(`CREATE VIRTUAL TABLE temp.title_terms USING fts5vocab(main, papers_fts, row);
    CREATE VIRTUAL TABLE temp.title_instances USING fts5vocab(main, papers_fts, instance)`);
  try {
    const leftOut = new Set(REPEATS_LEFT_OUT);
    // Only the terms some title holds twice (instances > titles) are read instance by instance.
    const terms = (
      db.prepare('SELECT term FROM temp.title_terms WHERE cnt > doc ORDER BY term').pluck().all() as string[]
    ).filter((t) => !leftOut.has(t));
    const twice = db
      .prepare('SELECT doc, count(*) AS n FROM temp.title_instances WHERE term = ? GROUP BY doc HAVING n > 1')
      .raw();
    const markers = new Map<number, string[]>();
    for (const term of terms)
      for (const [doc, n] of twice.all(term) as [number, number][])
        getOrCreate(markers, doc, () => []).push(repeatMarker(term), repeatMarker(term, n));
    return markers;
  } finally {
    db.exec('DROP TABLE temp.title_terms; DROP TABLE temp.title_instances');
  }
}

/**
 * The topic model alone, in its side file, from the titles of the snapshot's paper rows (read in
 * place: its `papers` is the attached snapshot's); `onTitlesRead` once they are read.
 */
export function buildTopicTermsFile(
  snapshotPath: string,
  topicsPath: string,
  onTitlesRead: () => void,
  topics: TopicTermsInput,
): void {
  rmSync(topicsPath, { force: true });
  const db = new Database(topicsPath);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.prepare('ATTACH ? AS snapshot').run(snapshotPath);
    buildTopicTerms(db, topics, () => {
      db.exec('DETACH snapshot');
      onTitlesRead();
    });
  } finally {
    db.close();
  }
}

/**
 * Copies the index built in the side file into the snapshot open on `db` (whose papers_fts is
 * empty, as created), replacing what FTS5 wrote when the table was created.
 */
export function copyTitleIndex(db: Database.Database, sidePath: string): void {
  db.prepare('ATTACH ? AS titles').run(sidePath);
  db.prepare('ATTACH ? AS topics').run(topicTermsFile(sidePath));
  // FTS5's tables are written by FTS5 alone unless the connection allows it (defensive mode).
  db.unsafeMode(true);
  try {
    db.transaction(() => {
      for (const table of INDEX_TABLES) {
        db.exec(`DELETE FROM main.${table}`);
        db.exec(`INSERT INTO main.${table} SELECT * FROM titles.${table}`);
      }
      for (const table of TOPIC_TABLES) db.exec(`INSERT INTO main.${table} SELECT * FROM topics.${table}`);
    })();
  } finally {
    db.unsafeMode(false);
    db.exec('DETACH titles');
    db.exec('DETACH topics');
  }
}

export type TitleIndexReply = { titlesRead: true } | { ok: true } | { ok: false; error: string };

/** The index being built: when the titles are read, when it is built, and a way to stop it. */
export interface PendingTitleIndex {
  titlesRead: Promise<void>;
  built: Promise<void>;
  stop(): void;
}

/**
 * Starts building the index of the snapshot at `snapshotPath` (its paper rows written and
 * committed) in a worker thread; without the compiled worker, on this thread at once.
 */
export function startTitleIndex(
  snapshotPath: string,
  sidePath: string,
  topics?: TopicTermsInput,
): PendingTitleIndex {
  const file = workerFile(import.meta.url, './title-index-worker.js');
  if (!existsSync(file)) {
    const built = new Promise<void>((resolve) => {
      buildTitleIndex(snapshotPath, sidePath, () => {}, topics);
      resolve();
    });
    built.catch(() => {}); // awaited by the writer
    return { titlesRead: built, built, stop: () => {} };
  }
  // The index and the topic model, each in a thread of its own (the same bytes either way).
  const jobs = [
    startWorker(file, { job: 'index', snapshotPath, sidePath }),
    startWorker(file, {
      job: 'topics',
      snapshotPath,
      sidePath: topicTermsFile(sidePath),
      topics: topics ?? { clusters: new Int32Array(0), texts: [] },
    }),
  ];
  const built = Promise.all(jobs.map((j) => j.built)).then(() => {});
  built.catch(() => {}); // awaited by the writer
  const titlesRead = Promise.all(jobs.map((j) => j.titlesRead)).then(() => {});
  titlesRead.catch(() => {});
  return {
    titlesRead,
    built,
    stop: () => {
      for (const j of jobs) j.stop();
    },
  };
}

/** What a worker of title-index-worker.ts is given. */
export type TitleIndexJob =
  | { job: 'index'; snapshotPath: string; sidePath: string }
  | { job: 'topics'; snapshotPath: string; sidePath: string; topics: TopicTermsInput };

function startWorker(file: string, job: TitleIndexJob): PendingTitleIndex {
  const worker = new Worker(file, { workerData: job });
  let titlesReadResolve!: () => void;
  const titlesRead = new Promise<void>((resolve) => {
    titlesReadResolve = resolve;
  });
  const built = new Promise<void>((resolve, reject) => {
    worker.on('message', (reply: TitleIndexReply) => {
      if ('titlesRead' in reply) titlesReadResolve();
      else if (reply.ok) resolve();
      else reject(new Error(`the titles' index failed: ${reply.error}`));
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the titles' index worker exited (code ${code})`)));
  });
  built.catch(() => {}); // awaited by the writer; a failure before then is the writer's to report
  // A failure before the titles are read ends the wait for them too.
  const read = Promise.race([titlesRead, built.then(() => titlesRead)]);
  return { titlesRead: read, built, stop: () => void worker.terminate() };
}

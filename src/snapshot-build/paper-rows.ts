import type Database from 'better-sqlite3';
import { ELEMENTS } from '../elements/elements.js';
import type { CorpusStore } from '../ingest/corpus-store.js';
import { normaliseTitle, normaliseVenue } from '../ingest/paper-record.js';
import type { Clusters } from '../scoring/clusters.js';
import type { Corpus } from '../scoring/corpus.js';
import type { PaperImpact } from '../scoring/impact.js';
import { readPaperColumnBytes } from '../snapshot/column-parts.js';
import { dateNumber, typedArrayOf } from '../snapshot/paper-columns.js';
import { SNAPSHOT_SCHEMA_VERSION } from '../snapshot/schema.js';
import { batchedInsert } from './batched-insert.js';
import type { StagedRefs } from './refs-columns.js';
import { topicSubjectId } from './subject-rows.js';

/** What the paper rows are written from: the corpus, each paper's impact and community. */
export interface PaperContent {
  corpus: Corpus;
  impact: PaperImpact;
  clusters: Clusters;
  /**
   * The snapshot the corpus's build cache was made with, and where each paper's row is in it: the
   * ordinal there of a paper whose work is unchanged since, else -1 (an incremental load). Those
   * rows are copied from it rather than made again (see writePaperRows).
   */
  previous?: { file: string; ordinal: Int32Array };
  /** The in-corpus references, staged for the snapshot's refs columns (refs-columns.ts). */
  refs: StagedRefs;
}

/** Paper rows per INSERT statement: one statement call per row cost about as much as the row. */
const PAPER_BATCH = 64;
const PAPER_COLUMNS = 11;

/**
 * A paper's four texts (DOI, title, venue, date) as one string, so that reading them from the
 * store costs one string per row, not four: fields joined by U+001F; within a field U+001B is
 * written as U+001B 'e' and U+001F as U+001B 's'; NULL is U+001B 'n'.
 */
const TEXT_COLUMNS = ['doi', 'title', 'venue', 'pub_date'];
// The two replaces run only on the rare text that holds either character: on every text they were
// a third of the query's CPU (about 1 s at 1M works).
const joinedTexts = TEXT_COLUMNS.map(
  (c) =>
    `coalesce(CASE WHEN contains(${c}, chr(27)) OR contains(${c}, chr(31)) ` +
    `THEN replace(replace(${c}, chr(27), chr(27) || 'e'), chr(31), chr(27) || 's') ELSE ${c} END, chr(27) || 'n')`,
).join(' || chr(31) || ');

const ESCAPED_SEPARATOR = '\u001bs';
const ESCAPED_ESCAPE = '\u001be';

function unescapeText(field: string): string | null {
  if (!field.includes('\u001b')) return field;
  if (field === '\u001bn') return null;
  return field.replaceAll(ESCAPED_SEPARATOR, '\u001f').replaceAll(ESCAPED_ESCAPE, '\u001b');
}

/**
 * Writes every paper row, in ordinal order; returns the papers' dates as YYYYMMDD numbers (the
 * pub_date column). A row is the work's texts and facts, which change only with its record (the
 * numbers that move with the rest of the corpus, such as the impact score, are whole-corpus
 * columns). With `previous` (an incremental build), the rows of unchanged works are copied from
 * the previous snapshot by SQLite itself, a run of consecutive rows per statement, and only the
 * changed and new works' rows are made here from the store. Either way the same rows go in the
 * same order, so the file and its data_version are the same.
 */
export async function writePaperRows(
  db: Database.Database,
  content: PaperContent,
  store: CorpusStore,
  log: (msg: string) => void,
): Promise<Int32Array> {
  const previous = content.previous;
  if (previous) {
    try {
      const { pubDates, copied } = await copyingFrom(db, previous, content, store);
      log(`  papers: ${content.corpus.n} (${copied} rows copied from the previous snapshot)`);
      return pubDates;
    } catch (e) {
      // Nothing of it stays (rolled back): the rows are made from the store as in a full build.
      log(`  paper rows made in full: ${(e as Error).message}`);
    }
  }
  db.exec('BEGIN');
  const pubDates = await writeFromStore(db, content, store, null);
  db.exec('COMMIT');
  log(`  papers: ${content.corpus.n}`);
  return pubDates;
}

async function copyingFrom(
  db: Database.Database,
  previous: NonNullable<PaperContent['previous']>,
  content: PaperContent,
  store: CorpusStore,
): Promise<{ pubDates: Int32Array; copied: number }> {
  db.prepare('ATTACH ? AS prev').run(previous.file);
  try {
    const schema = db.prepare("SELECT value FROM prev.meta WHERE key = 'schema_version'").pluck().get();
    if (String(schema) !== String(SNAPSHOT_SCHEMA_VERSION))
      throw new Error(`the previous snapshot has schema ${String(schema)}`);
    db.exec('BEGIN');
    const copied = await copyFromPrevious(db, content, previous.ordinal, store);
    db.exec('COMMIT');
    return copied;
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.exec('DETACH prev');
  }
}

/** Writes one paper's row values into `values` from `k`; returns its date as YYYYMMDD. */
type RowFiller = (values: unknown[], k: number, p: number, texts: string) => number;

/** The row of paper p: its texts (joined as the store query gives them) and the content's columns. */
function rowFiller(content: PaperContent): RowFiller {
  const { corpus } = content;
  // Each value's text made once, not once per paper that carries it.
  const symbols = ELEMENTS.map((e) => e.symbol);
  const topicNames = corpus.topicIds.map(topicSubjectId);
  const slugs = corpus.keywordSlugs;
  const list = (csr: Corpus['topics'], p: number, names: readonly string[]) => {
    let out = '';
    for (let i = csr.start[p]!; i < csr.start[p + 1]!; i++) out += (out ? ',' : '') + names[csr.values[i]!]!;
    return out;
  };
  return (values, k, p, texts) => {
    const [doi, title, venue, date] = texts.split('\u001f');
    values[k++] = p;
    values[k++] = corpus.workId[p];
    values[k++] = unescapeText(doi!);
    // As a reader expects them (ingest/paper-record.ts): every front door reads these rows.
    values[k++] = normaliseTitle(unescapeText(title!));
    values[k++] = normaliseVenue(unescapeText(venue!));
    values[k++] = corpus.year[p] || null;
    const pubDate = unescapeText(date!);
    values[k++] = pubDate;
    values[k++] = corpus.citations[p]! >= 0 ? corpus.citations[p] : null;
    values[k++] = list(corpus.elements, p, symbols);
    values[k++] = list(corpus.topics, p, topicNames);
    values[k++] = list(corpus.keywords, p, slugs);
    return dateNumber(pubDate);
  };
}

/**
 * The rows of the papers the store query gives (every paper, or those of table `fresh`), in
 * ordinal order, made from the store's texts; `between` is called with each paper's ordinal
 * before its row, so the caller can write other rows before it.
 */
async function writeFromStore(
  db: Database.Database,
  content: PaperContent,
  store: CorpusStore,
  between: ((p: number) => void) | null,
  pubDates: Int32Array = new Int32Array(content.corpus.n),
): Promise<Int32Array> {
  const fill = rowFiller(content);
  const rows = batchedInsert(db, 'papers', PAPER_COLUMNS, { batch: PAPER_BATCH });
  const only = between ? 'WHERE o IN (SELECT o FROM fresh)' : '';
  await store.forEachChunk(
    `SELECT o, ${joinedTexts} FROM works JOIN ord USING (id) ${only} ORDER BY o`,
    (chunk) => {
      const ordinals = chunk.getColumnVector(0);
      const texts = chunk.getColumnVector(1);
      for (let i = 0; i < chunk.rowCount; i++) {
        const p = ordinals.getItem(i) as number;
        if (between) {
          rows.flush();
          between(p);
        }
        pubDates[p] = fill(rows.values, rows.next(), p, texts.getItem(i) as string);
        rows.added();
      }
    },
  );
  rows.flush();
  return pubDates;
}

/**
 * The incremental way to the same rows: the unchanged works' rows from the previous snapshot
 * (`prev`, attached) as they are, with today's ordinal (one statement per run of rows consecutive
 * in both files), and the changed and new works' rows from the store in between. The previous
 * snapshot's work ids (its column) must be those the build cache says, row by row, before any is copied.
 */
async function copyFromPrevious(
  db: Database.Database,
  content: PaperContent,
  previousOrdinal: Int32Array,
  store: CorpusStore,
): Promise<{ pubDates: Int32Array; copied: number }> {
  const { corpus } = content;
  const n = corpus.n;
  const previousWork = previousColumn(db, 'work_id', Float64Array);
  const fresh: number[] = [];
  for (let p = 0; p < n; p++) {
    const q = previousOrdinal[p]!;
    if (q < 0) fresh.push(p);
    else if (previousWork[q] !== corpus.workId[p])
      throw new Error(
        `the previous snapshot does not hold the rows the build cache says (its paper ${q} is another work)`,
      );
  }

  const copy = db.prepare(`INSERT INTO papers SELECT ordinal + ?, work_id, doi, title, venue, year,
      pub_date, citations, elements, topics, keywords
    FROM prev.papers WHERE ordinal BETWEEN ? AND ? ORDER BY ordinal`);
  let copied = 0;
  let from = 0;
  /** Copies the rows of ordinals from..to-1 (all copied ones: the fresh ones are between runs). */
  const copyUpTo = (to: number) => {
    for (let p = from; p < to; ) {
      // A run: ordinals consecutive here and in the previous snapshot.
      const q = previousOrdinal[p]!;
      let end = p + 1;
      while (end < to && previousOrdinal[end] === q + (end - p)) end++;
      copied += copy.run(p - q, q, q + (end - p) - 1).changes;
      p = end;
    }
  };
  // The changed and new works, by ordinal, for the store query.
  await store.con.run('CREATE OR REPLACE TEMP TABLE fresh (o INTEGER)');
  const appender = await store.con.createAppender('fresh');
  for (const p of fresh) {
    appender.appendInteger(p);
    appender.endRow();
  }
  appender.closeSync();
  let made = 0;
  const pubDates = await writeFromStore(
    db,
    content,
    store,
    (p) => {
      copyUpTo(p);
      from = p + 1;
      made++;
    },
    previousDates(db, previousOrdinal),
  );
  copyUpTo(n);
  await store.con.run('DROP TABLE fresh');
  // Every paper has its row, once: else the file would differ from a full build's.
  if (made !== fresh.length || copied + made !== n)
    throw new Error(
      `the previous snapshot does not hold the rows the build cache says (${copied} copied, ${made} made, ${n} papers)`,
    );
  return { pubDates, copied };
}

/** A whole-corpus column of the previous snapshot. */
function previousColumn<T>(
  db: Database.Database,
  name: string,
  Type: { BYTES_PER_ELEMENT: number; new (buffer: ArrayBuffer, offset?: number, length?: number): T },
): T {
  const blob = readPaperColumnBytes(db, name, 'prev.paper_columns');
  if (!blob) throw new Error(`the previous snapshot has no ${name} column`);
  return typedArrayOf(Type, blob);
}

/** The copied papers' dates (YYYYMMDD) from the previous snapshot's column, by today's ordinal. */
function previousDates(db: Database.Database, previousOrdinal: Int32Array): Int32Array {
  const before = previousColumn(db, 'pub_date', Int32Array);
  const out = new Int32Array(previousOrdinal.length);
  for (let p = 0; p < out.length; p++) {
    const q = previousOrdinal[p]!;
    if (q >= 0) out[p] = before[q]!;
  }
  return out;
}

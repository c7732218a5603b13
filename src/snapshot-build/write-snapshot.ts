import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { ELEMENTS } from '../elements/elements.js';
import type { CorpusStore } from '../ingest/corpus-store.js';
import type { Corpus } from '../scoring/corpus.js';
import { doiOrder } from '../scoring/doi-order.js';
import { paperColumnRows } from '../snapshot/column-parts.js';
import { enablePageChecksums, pageChecksums, pagesChecked } from '../snapshot/page-checksums.js';
import { SNAPSHOT_SCHEMA, SUBJECT_INDEXES } from '../snapshot/schema.js';
import { releaseFreeMemory } from '../util/release-memory.js';
import { batchedInsert } from './batched-insert.js';
import { type ChangesBase, writeChanges } from './changes.js';
import { type PaperContent, writePaperRows } from './paper-rows.js';
import { writeRefsColumns } from './refs-columns.js';
import type { ScoredSubjects } from './score-subjects.js';
import {
  type CommunityRows,
  type SubjectRows,
  type SubjectTexts,
  subjectTexts,
  topicSubjectId,
} from './subject-rows.js';
import {
  copyTitleIndex,
  type PendingTitleIndex,
  startTitleIndex,
  titleIndexFile,
  topicTermsFile,
} from './title-index.js';
import type { TopicTermsInput } from './topic-terms.js';

/** The communities (scored on the writer's thread while the worker scores the subjects). */
interface CommunityContent {
  communities: CommunityRows;
  elementCommunities: CommunityRows;
}

/** What the scoring gives besides the subjects' rows, and the build's notes. */
export interface SubjectContent extends Omit<ScoredSubjects, 'window'> {
  meta: Record<string, string | number>;
}

/** What the writer awaits of the scoring, besides the paper content, as each part comes. */
export interface ScoredContent {
  corpus: Corpus;
  /** The communities, scored on the writer's thread while the worker scores the subjects. */
  communities: () => CommunityContent;
  /** Each type's subject rows (SCORING_ORDER: the tables' key order), as the worker hands them over. */
  rows: AsyncIterable<SubjectRows>;
  scores: Promise<SubjectContent>;
}

/**
 * Writes a complete snapshot file. Every row is written in a fixed order so the same corpus
 * gives the same bytes, and so the same data_version. The subjects come first: their search rows
 * and the communities (scored here by `communities`) while the build's worker scores, then each
 * type's rows as the worker hands them over, so that none is held longer than its writing. Then,
 * with the worker gone, `papers` is asked for what the papers are written from (the references
 * are staged then) and the paper rows are written: made from the corpus store (texts streamed in
 * ordinal order, never all in memory at once) or, for unchanged works in an incremental build,
 * copied from the previous snapshot (paper-rows.ts); the titles' full-text index is built
 * meanwhile in a thread of its own.
 *
 * Every page carries a checksum (page-checksums.ts), so that a server can serve the file before it
 * has hashed it; `pageChecksums: false` writes the file without them, as builds before them did.
 */
export async function writeSnapshot(
  path: string,
  papers: () => Promise<PaperContent>,
  scored: ScoredContent,
  store: CorpusStore,
  log: (msg: string) => void,
  options: {
    pageChecksums?: boolean;
    /**
     * The snapshots the changes may be computed against, first choice first (changes.ts:
     * changesBases); none for a folder's first.
     */
    changesBases?: Promise<ChangesBase[]>;
  } = {},
): Promise<void> {
  let checksums = options.pageChecksums ?? true;
  if (checksums) {
    // Loaded before the file is opened: its pages are written through the extension's VFS.
    const loaded = pageChecksums();
    if (!loaded.loaded) {
      log(
        `WARNING: writing the snapshot without page checksums (${loaded.problem}); a server hashes it whole before it serves it`,
      );
      checksums = false;
    }
  }
  const db = new Database(path);
  const titles: TitleIndex = { path, sidePath: titleIndexFile(path), pending: null };
  try {
    await writeAll(db, papers, scored, store, log, titles, checksums, options.changesBases);
  } finally {
    titles.pending?.stop();
    db.close();
    rmSync(titles.sidePath, { force: true });
    rmSync(topicTermsFile(titles.sidePath), { force: true });
  }
}

/** The snapshot's file, its titles' index's side file, and the index while it is built. */
interface TitleIndex {
  path: string;
  sidePath: string;
  pending: PendingTitleIndex | null;
}

async function writeAll(
  db: Database.Database,
  papers: () => Promise<PaperContent>,
  scored: ScoredContent,
  store: CorpusStore,
  log: (msg: string) => void,
  titles: TitleIndex,
  checksums: boolean,
  changesBases: Promise<ChangesBase[]> | undefined,
): Promise<void> {
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('page_size = 8192');
  // Before the first table: the 8 bytes at the end of each page are reserved for its checksum.
  if (checksums) enablePageChecksums(db);
  db.pragma('cache_size = -131072'); // 128 MB: the build's peak memory budget is shared with the corpus
  // CREATE INDEX may sort on a second thread (the same index, byte for byte), once the scoring is done.
  db.pragma('threads = 2');
  db.exec(SNAPSHOT_SCHEMA);
  if (checksums && !pagesChecked(db)) throw new Error('the snapshot was written without its page checksums');

  // The subjects' search rows and the communities while the worker scores the subjects.
  const texts = subjectTexts(scored.corpus);
  const communityRows = scored.communities();
  db.transaction(() => {
    writeSubjectSearch(db, texts);
    writeCommunities(db, 'communities', communityRows.communities);
    writeCommunities(db, 'element_communities', communityRows.elementCommunities);
  })();
  writeSubjectTerms(db);
  // Each type's subjects as the worker hands them over, while it scores the next.
  let subjects = 0;
  for await (const typeRows of scored.rows) {
    db.transaction(() => writeSubjects(db, typeRows, texts))();
    subjects += typeRows.count;
  }
  log(`  subjects: ${subjects}`);
  const content = await scored.scores;
  // The papers, with the scoring worker gone.
  const paperContent = await papers();
  const pubDates = await writePaperRows(db, paperContent, store, log);
  await store.releaseCache(); // the store is read no more: its cache let go before the titles' index
  releaseFreeMemory(); // and what the paper rows and the references' staging freed
  // The titles' index is built in a thread of its own from here (title-index.ts); the file is
  // not written again until its titles are read.
  titles.pending = startTitleIndex(titles.path, titles.sidePath, topicTexts(paperContent, texts));
  await titles.pending.titlesRead;
  db.transaction(() => writePaperColumns(db, paperContent, pubDates))();
  // The titles' index goes in here, whichever thread finished first (the same bytes either way).
  await titles.pending.built;
  copyTitleIndex(db, titles.sidePath);
  log('  full-text index copied');
  db.transaction(() => {
    const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    for (const [k, v] of Object.entries(content.meta).sort(([a], [b]) => a.localeCompare(b)))
      meta.run(k, String(v));

    const periods = db.prepare('INSERT INTO periods VALUES (?, ?, ?, ?)');
    for (const p of content.periods) periods.run(p.resolution, p.period, p.papers, p.highImpactPapers);
    const column = columnWriter(db);
    column('rank_position', bytesOf(content.rankPosition));
    column('recency', bytesOf(content.recencyNow));
  })();
  // What moved since the snapshot published before: a join of the two subject tables. A base
  // whose pages are found damaged as they are read gives way to the next.
  for (const base of (await changesBases) ?? []) {
    try {
      const moved = writeChanges(db, base);
      log(`  changes since ${base.version}: ${moved} subjects moved`);
      break;
    } catch (e) {
      log(`  changes not computed against ${base.version}: ${(e as Error).message}`);
    }
  }
  db.exec(SUBJECT_INDEXES);
  db.pragma('journal_mode = DELETE');
}

/** What the topic model is counted from (topic-terms.ts): each paper's community and the topics' texts. */
function topicTexts(papers: PaperContent, texts: SubjectTexts): TopicTermsInput {
  const out: TopicTermsInput = { clusters: papers.clusters.topic, texts: [] };
  for (let i = 0; i < texts.type.length; i++) {
    if (texts.type[i] !== 'topic') continue;
    out.texts.push({
      topic: Number(texts.id[i]!.slice(1)),
      text: `${texts.name[i]!} ${texts.description[i] ?? ''}`,
    });
  }
  return out;
}

/**
 * The subjects' search rows, elements, topics, then keywords (their rowids break the search's
 * ties): written from the corpus before the scores come, as the subjects are the same either way.
 * The topics' rows again in topics_fts under the same rowids, for research's topic queries.
 */
function writeSubjectSearch(db: Database.Database, texts: SubjectTexts): void {
  const fts = db.prepare('INSERT INTO subjects_fts (type, id, name, description) VALUES (?, ?, ?, ?)');
  const topics = db.prepare('INSERT INTO topics_fts (rowid, id, name, description) VALUES (?, ?, ?, ?)');
  for (let i = 0; i < texts.type.length; i++) {
    const row = fts.run(texts.type[i]!, texts.id[i]!, texts.name[i]!, texts.description[i]!).lastInsertRowid;
    if (texts.type[i] === 'topic') topics.run(row, texts.id[i]!, texts.name[i]!, texts.description[i]!);
  }
}

/**
 * Each term's rows in subjects_fts (what its bm25 counts), for ranking topics_fts's matches as
 * subjects_fts ranks them (snapshot/topic-search.ts); read from the index once it is written.
 */
function writeSubjectTerms(db: Database.Database): void {
  db.exec(`CREATE VIRTUAL TABLE temp.subject_vocab USING fts5vocab(main, subjects_fts, row);
    INSERT INTO subject_terms SELECT term, doc FROM temp.subject_vocab;
    DROP TABLE temp.subject_vocab`);
}

/**
 * One type's subjects, their history, routed elements and postings. The types come in the
 * tables' key order (SCORING_ORDER) and each type's rows go in by id, so every row is appended to
 * its B-tree. Routed elements, ten a subject, several to a statement (a call per row cost about as
 * much as the row). They must be the subjects of that type whose search rows were written.
 */
function writeSubjects(db: Database.Database, rows: SubjectRows, texts: SubjectTexts): void {
  const type = rows.type[0];
  const ids = texts.id.filter((_, i) => texts.type[i] === type);
  if (rows.count !== ids.length || rows.id.some((id, i) => id !== ids[i] || rows.type[i] !== type))
    throw new Error(`the scored ${type ?? ''} subjects are not the corpus's, in order`);
  const subject = db.prepare('INSERT INTO subjects VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const history = db.prepare('INSERT INTO history VALUES (?, ?, ?, ?)');
  const routed = batchedInsert(db, 'routed_elements', 5);
  const { ranked, rankedStart, historyRows, historySeries, routedStart } = rows;
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const keyOrder = Array.from({ length: rows.count }, (_, i) => i).sort((a, b) =>
    byText(rows.id[a]!, rows.id[b]!),
  );
  for (const i of keyOrder) {
    const type = rows.type[i]!;
    const id = rows.id[i]!;
    const hri = rows.hri[i]!;
    subject.run(
      type,
      id,
      rows.name[i]!,
      rows.description[i]!,
      rows.paperCount[i]!,
      rows.windowPapers[i]!,
      rows.ri[i]!,
      rows.ris[i]!,
      Number.isNaN(hri) ? null : hri,
      rows.totalRanked[i]!,
      Buffer.from(ranked.buffer, ranked.byteOffset + rankedStart[i]!, rankedStart[i + 1]! - rankedStart[i]!),
      rows.extra[i]!,
    );
    const resolutions = [];
    for (let h = historyRows[i]!; h < historyRows[i + 1]!; h++) resolutions.push(h);
    resolutions.sort((a, b) => byText(rows.historyResolution[a]!, rows.historyResolution[b]!));
    for (const h of resolutions) {
      history.run(type, id, rows.historyResolution[h]!, bytesOf(historySeries[h]!));
    }
    for (let r = routedStart[i]!; r < routedStart[i + 1]!; r++) {
      const at = routed.next();
      routed.values[at] = type;
      routed.values[at + 1] = id;
      routed.values[at + 2] = r - routedStart[i]! + 1;
      routed.values[at + 3] = rows.routedSymbol[r]!;
      routed.values[at + 4] = rows.routedShare[r]!;
      routed.added();
    }
  }
  routed.flush();
  writePostings(db, rows);
}

/**
 * Communities (element -1) or element sub-communities, in the order of the rows, several to a
 * statement (about 50,000 sub-communities at 1M works: a call per row took 0.2 s).
 */
function writeCommunities(db: Database.Database, table: string, rows: CommunityRows): void {
  const withElement = table === 'element_communities';
  const insert = batchedInsert(db, table, withElement ? 7 : 6);
  const { values } = insert;
  for (let i = 0; i < rows.topicId.length; i++) {
    let at = insert.next();
    if (withElement) values[at++] = ELEMENTS[rows.element[i]!]!.symbol;
    values[at] = topicSubjectId(rows.topicId[i]!);
    values[at + 1] = rows.paperCount[i]!;
    values[at + 2] = rows.recentPapers[i]!;
    values[at + 3] = rows.riRecent[i]!;
    values[at + 4] = rows.riBefore[i]!;
    values[at + 5] = rows.rising[i]!;
    insert.added();
  }
  insert.flush();
}

/** Writes one whole-corpus column into paper_columns (in parts when it is large). */
function columnWriter(db: Database.Database): (name: string, bytes: Buffer) => void {
  const insert = rowWriter(db);
  return (name, bytes) => {
    for (const [row, part] of paperColumnRows(name, bytes)) insert(row, part);
  };
}

/** Writes one row of paper_columns (a column, or a part of one). */
function rowWriter(db: Database.Database): (row: string, bytes: Buffer) => void {
  const insert = db.prepare('INSERT INTO paper_columns VALUES (?, ?)');
  return (row, bytes) => {
    insert.run(row, bytes);
  };
}

/** A typed array's bytes as a Buffer (no copy). */
const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/**
 * The whole-corpus columns by ordinal (paper-columns.ts) that do not depend on the scores, which
 * the lab, research and the reader load as typed arrays in one read per snapshot (the two scored
 * ones, rank_position and recency, are written once the scores come); the references from
 * their staging file (refs-columns.ts).
 */
function writePaperColumns(db: Database.Database, content: PaperContent, pubDates: Int32Array): void {
  const { corpus, clusters, impact } = content;
  const column = columnWriter(db);
  column('year', bytesOf(corpus.year));
  column('cluster', bytesOf(clusters.topic));
  column('impact_score', bytesOf(impact.impactScore));
  column('citation_percentile', bytesOf(impact.citationPercentile));
  column('high_impact', bytesOf(impact.highImpact));
  column('cluster_from_citations', bytesOf(clusters.fromCitations));
  column('work_id', bytesOf(corpus.workId));
  column('doi_order', bytesOf(doiOrder(corpus)));
  column('pub_date', bytesOf(pubDates));
  writeRefsColumns(content.refs, rowWriter(db));
}

/** Each subject's papers (ordinals ascending), for the lab's set algebra, in the order of the rows. */
function writePostings(db: Database.Database, subjects: SubjectRows): void {
  const posting = db.prepare('INSERT INTO postings VALUES (?, ?, ?)');
  const { postings, postingsStart } = subjects;
  for (let i = 0; i < subjects.count; i++)
    posting.run(
      subjects.type[i]!,
      subjects.id[i]!,
      bytesOf(postings.subarray(postingsStart[i]!, postingsStart[i + 1]!)),
    );
}

import Database from 'better-sqlite3';
import { ELEMENTS } from '../elements/elements.js';
import type { CorpusStore } from '../ingest/corpus-store.js';
import type { Clusters } from '../scoring/clusters.js';
import type { Corpus } from '../scoring/corpus.js';
import type { PaperImpact } from '../scoring/impact.js';
import { dateNumber } from './paper-columns.js';
import { PAPER_INDEXES, SNAPSHOT_SCHEMA, SUBJECT_INDEXES } from './schema.js';
import type { ScoredSubjects } from './score-subjects.js';
import { type CommunityRows, type SubjectRows, topicSubjectId } from './subject-rows.js';

/** What the paper rows are written from: the corpus, each paper's impact and community. */
export interface PaperContent {
  corpus: Corpus;
  impact: PaperImpact;
  clusters: Clusters;
}

/** Everything else in the file: the subject scores (scored and laid out as rows) and the build's notes. */
export interface SubjectContent extends Omit<ScoredSubjects, 'window'> {
  meta: Record<string, string | number>;
}

export type SnapshotContent = PaperContent & SubjectContent;

/**
 * Writes a complete snapshot file. Every row is written in a fixed order so the same corpus
 * gives the same bytes, and so the same data_version. Paper texts (DOI, title, venue, date)
 * stream from the corpus store, in ordinal order, and never sit in memory all at once. The
 * paper rows, their full-text index and indexes come first and do not depend on the subject
 * scores, which are awaited only after them (the build scores in a worker thread meanwhile).
 */
export async function writeSnapshot(
  path: string,
  papers: PaperContent,
  subjects: Promise<SubjectContent>,
  store: CorpusStore,
  log: (msg: string) => void,
): Promise<void> {
  const db = new Database(path);
  try {
    await writeAll(db, papers, subjects, store, log);
  } finally {
    db.close();
  }
}

async function writeAll(
  db: Database.Database,
  papers: PaperContent,
  subjects: Promise<SubjectContent>,
  store: CorpusStore,
  log: (msg: string) => void,
): Promise<void> {
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('page_size = 8192');
  db.pragma('cache_size = -131072'); // 128 MB: the build's peak memory budget is shared with the corpus
  // CREATE INDEX may sort on a second thread (the same index, byte for byte), once the scoring is done.
  db.pragma('threads = 2');
  db.exec(SNAPSHOT_SCHEMA);

  db.exec('BEGIN');
  const pubDates = await writePapers(db, papers, store);
  db.exec('COMMIT');
  log(`  papers: ${papers.corpus.n}`);
  // What depends only on the paper rows is built before the scores are awaited (the worker is
  // still scoring meanwhile).
  db.exec("INSERT INTO papers_fts (papers_fts) VALUES ('rebuild')");
  db.exec(PAPER_INDEXES);
  log('  full-text index and paper indexes built');
  const content: SnapshotContent = { ...papers, ...(await subjects) };

  const insert = db.transaction(() => {
    const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    for (const [k, v] of Object.entries(content.meta).sort(([a], [b]) => a.localeCompare(b)))
      meta.run(k, String(v));

    const periods = db.prepare('INSERT INTO periods VALUES (?, ?, ?, ?)');
    for (const p of content.periods) periods.run(p.resolution, p.period, p.papers, p.highImpactPapers);

    writeSubjects(db, content.subjects);
    log(`  subjects: ${content.subjects.count}`);
    writeColumns(db, content, pubDates);
    writeCommunities(db, 'INSERT INTO communities VALUES (?, ?, ?, ?, ?, ?)', content.communities);
    writeCommunities(
      db,
      'INSERT INTO element_communities VALUES (?, ?, ?, ?, ?, ?, ?)',
      content.elementCommunities,
    );
  });
  insert();
  db.exec(SUBJECT_INDEXES);
  db.pragma('journal_mode = DELETE');
}

/** Paper rows per INSERT statement: one statement call per row cost about as much as the row. */
const PAPER_BATCH = 64;
const PAPER_COLUMNS = 16;

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

/** Writes the paper rows; returns their dates as YYYYMMDD numbers (for the pub_date column). */
async function writePapers(
  db: Database.Database,
  { corpus, impact, clusters }: PaperContent,
  store: CorpusStore,
): Promise<Int32Array> {
  const pubDates = new Int32Array(corpus.n);
  const row = `(${Array(PAPER_COLUMNS).fill('?').join(', ')})`;
  const one = db.prepare(`INSERT INTO papers VALUES ${row}`);
  const batch = db.prepare(`INSERT INTO papers VALUES ${Array(PAPER_BATCH).fill(row).join(', ')}`);
  const values: unknown[] = new Array(PAPER_BATCH * PAPER_COLUMNS);
  let pending = 0;
  // Each value's text made once, not once per paper that carries it.
  const symbols = ELEMENTS.map((e) => e.symbol);
  const topicNames = corpus.topicIds.map(topicSubjectId);
  const slugs = corpus.keywordSlugs;
  const list = (csr: Corpus['topics'], p: number, names: readonly string[]) => {
    let out = '';
    for (let i = csr.start[p]!; i < csr.start[p + 1]!; i++) out += (out ? ',' : '') + names[csr.values[i]!]!;
    return out;
  };
  const nullable = (v: number) => (Number.isNaN(v) ? null : v);
  await store.forEachChunk(`SELECT o, ${joinedTexts} FROM works JOIN ord USING (id) ORDER BY o`, (chunk) => {
    const ordinals = chunk.getColumnVector(0);
    const texts = chunk.getColumnVector(1);
    for (let i = 0; i < chunk.rowCount; i++) {
      const p = ordinals.getItem(i) as number;
      const [doi, title, venue, date] = (texts.getItem(i) as string).split('\u001f');
      const cluster = clusters.topic[p]!;
      let k = pending * PAPER_COLUMNS;
      values[k++] = p;
      values[k++] = corpus.workId[p];
      values[k++] = unescapeText(doi!);
      values[k++] = unescapeText(title!);
      values[k++] = unescapeText(venue!);
      values[k++] = corpus.year[p] || null;
      const pubDate = unescapeText(date!);
      values[k++] = pubDate;
      pubDates[p] = dateNumber(pubDate);
      values[k++] = corpus.citations[p]! >= 0 ? corpus.citations[p] : null;
      values[k++] = nullable(impact.impactScore[p]!);
      values[k++] = nullable(impact.citationPercentile[p]!);
      values[k++] = impact.highImpact[p];
      values[k++] = cluster === -1 ? null : cluster;
      values[k++] = cluster === -1 ? null : clusters.fromCitations[p] ? 'citations' : 'topic';
      values[k++] = list(corpus.elements, p, symbols);
      values[k++] = list(corpus.topics, p, topicNames);
      values[k++] = list(corpus.keywords, p, slugs);
      if (++pending === PAPER_BATCH) {
        batch.run(values);
        pending = 0;
      }
    }
  });
  for (let r = 0; r < pending; r++) one.run(values.slice(r * PAPER_COLUMNS, (r + 1) * PAPER_COLUMNS));
  return pubDates;
}

function writeSubjects(db: Database.Database, rows: SubjectRows): void {
  const subject = db.prepare('INSERT INTO subjects VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const fts = db.prepare('INSERT INTO subjects_fts (type, id, name, description) VALUES (?, ?, ?, ?)');
  const history = db.prepare('INSERT INTO history VALUES (?, ?, ?, ?)');
  const routed = db.prepare('INSERT INTO routed_elements VALUES (?, ?, ?, ?, ?)');
  const { ranked, rankedStart, historyRows, historyStart, routedStart } = rows;
  const historyJson = Buffer.from(
    rows.historyJson.buffer,
    rows.historyJson.byteOffset,
    rows.historyJson.length,
  );
  for (let i = 0; i < rows.count; i++) {
    const type = rows.type[i]!;
    const id = rows.id[i]!;
    const name = rows.name[i]!;
    const description = rows.description[i]!;
    const hri = rows.hri[i]!;
    subject.run(
      type,
      id,
      name,
      description,
      rows.paperCount[i]!,
      rows.windowPapers[i]!,
      rows.ri[i]!,
      rows.ris[i]!,
      Number.isNaN(hri) ? null : hri,
      rows.totalRanked[i]!,
      Buffer.from(ranked.buffer, ranked.byteOffset + rankedStart[i]!, rankedStart[i + 1]! - rankedStart[i]!),
      rows.extra[i]!,
    );
    fts.run(type, id, name, description);
    for (let h = historyRows[i]!; h < historyRows[i + 1]!; h++) {
      const series = historyJson.toString('utf8', historyStart[h]!, historyStart[h + 1]!);
      history.run(type, id, rows.historyResolution[h]!, series);
    }
    for (let r = routedStart[i]!; r < routedStart[i + 1]!; r++)
      routed.run(type, id, r - routedStart[i]! + 1, rows.routedSymbol[r]!, rows.routedShare[r]!);
  }
}

/** Communities (element -1) or element sub-communities, in the order of the rows. */
function writeCommunities(db: Database.Database, sql: string, rows: CommunityRows): void {
  const insert = db.prepare(sql);
  for (let i = 0; i < rows.topicId.length; i++) {
    const values = [
      topicSubjectId(rows.topicId[i]!),
      rows.paperCount[i]!,
      rows.recentPapers[i]!,
      rows.riRecent[i]!,
      rows.riBefore[i]!,
      rows.rising[i]!,
    ];
    insert.run(...(rows.element[i] === -1 ? values : [ELEMENTS[rows.element[i]!]!.symbol, ...values]));
  }
}

/** A typed array's bytes as a Buffer (no copy). */
const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/**
 * What the lab's set algebra and research's candidates read: every subject's postings (its
 * papers, ordinals ascending) and whole-corpus columns by ordinal (paper-columns.ts). Loaded as
 * typed arrays in one read per snapshot.
 */
function writeColumns(db: Database.Database, content: SnapshotContent, pubDates: Int32Array): void {
  const { corpus, clusters, subjects } = content;
  const posting = db.prepare('INSERT INTO postings VALUES (?, ?, ?)');
  const { postings, postingsStart } = subjects;
  for (let i = 0; i < subjects.count; i++)
    posting.run(
      subjects.type[i]!,
      subjects.id[i]!,
      bytesOf(postings.subarray(postingsStart[i]!, postingsStart[i + 1]!)),
    );
  const column = db.prepare('INSERT INTO paper_columns VALUES (?, ?)');
  column.run('year', bytesOf(corpus.year));
  column.run('cluster', bytesOf(clusters.topic));
  column.run('rank_position', bytesOf(content.rankPosition));
  column.run('recency', bytesOf(content.recencyNow));
  column.run('impact_score', bytesOf(content.impact.impactScore));
  column.run('pub_date', bytesOf(pubDates));
  column.run('refs_start', bytesOf(corpus.refs.start));
  column.run('refs', bytesOf(corpus.refs.values.subarray(0, corpus.refs.start[corpus.n])));
}

/**
 * The snapshot file: everything the API serves for one data_version, read-only once published.
 * Subjects of every type (element, topic, keyword) share one table keyed by (type, id).
 */
/**
 * 2: postings and paper_columns, for the lab's set algebra. 3: the columns research reads of its
 * candidates (impact_score, pub_date, refs_start, refs) join paper_columns, and the references
 * leave the paper rows (see paper-columns.ts). 4: the numbers that move with the rest of the
 * corpus (impact score, citation percentile, high impact, community) leave the paper rows for
 * paper_columns, so a row changes only with its work and an update copies it as it is; the index
 * on work_id (which no query used) is gone. 5: history series are binary (scoring/history-codec.ts),
 * not JSON. 6: the papers in DOI order are a column (doi_order), searched by halves to find a
 * DOI, instead of an index on doi (1.1-1.5 s of every build at 1M works, for a rare lookup).
 * Still 6, read the same way: subjects and history keep their rows in the table and their key in
 * an index (not WITHOUT ROWID), as their rows of 1-3 KB are more than a key's B-tree holds in its
 * page and went to overflow pages, mostly empty (history took 177 MB of pages for 109 MB).
 * 7: topic_terms and topic_lengths, what the titles teach of their communities
 * (snapshot-build/topic-terms.ts), which research reads to find a question's topic.
 * 8: topics_fts, the topics' texts alone, which research's topic queries read instead of
 * subjects_fts (whose posting lists hold about seven keywords' rows a topic's), and subject_terms,
 * each term's rows in subjects_fts, so that they rank the topics as subjects_fts did.
 * 9: papers_by_length and papers_repeats, the titles' index again with the titles in order of
 * length (see PAPERS_BY_LENGTH), from which research ranks a common question's best title matches
 * without reading every one (core/research/title-ranking.ts).
 * 10: changes and change_publications, what moved per subject since the previous publication
 * (snapshot-build/changes.ts), read by the changes endpoints.
 * 11: the references packed (snapshot/packed-refs.ts: refs_packed and refs_checkpoints for the
 * int32 column refs), which a replica holds whole in memory: about a quarter less at 10M works.
 */
export const SNAPSHOT_SCHEMA_VERSION = 11;

/**
 * Publications whose changes a snapshot holds: its own and those it carries from the snapshot it
 * was compared with (a month of daily updates), so that `since=` reaches past the versions kept.
 */
export const CHANGE_PUBLICATIONS_KEPT = 30;

/**
 * The meta key holding each publication's corpus cut-off date (a JSON array by publication, null
 * where not known): the one date of a publication that a rebuild gives again (a clock time would
 * change the bytes, and so the data_version). The feeds date their entries by it.
 */
export const CHANGE_CUTOFFS = 'change_cutoffs';

/**
 * What moved per subject, per publication (snapshot-build/changes.ts). Publication 0 is this
 * snapshot's own, compared with the data version `since`; its `version` is NULL, as a file cannot
 * hold the hash of its own bytes. Publication 1 is the one before (its version named), and so on.
 * A subject new to the corpus has no values before; one gone has none after. rank is among its
 * kind by RIS (1 + those higher); rising is a topic's community's, NULL for other kinds.
 */
const CHANGE_TABLES = `CREATE TABLE change_publications (
  publication INTEGER PRIMARY KEY,
  version TEXT,
  since TEXT NOT NULL,
  changes INTEGER NOT NULL
);
CREATE TABLE changes (
  publication INTEGER NOT NULL,
  type TEXT NOT NULL,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  ri_before REAL,
  ri_after REAL,
  ris_before REAL,
  ris_after REAL,
  hri_before REAL,
  hri_after REAL,
  rank_before INTEGER,
  rank_after INTEGER,
  rising_before INTEGER,
  rising_after INTEGER,
  PRIMARY KEY (publication, type, id)
) WITHOUT ROWID`;

/**
 * The titles' full-text index over the paper rows (external content: the titles are the rows'
 * own). Built beside the snapshot from a copy of the titles and copied in
 * (snapshot-build/title-index.ts).
 */
export const TITLE_TOKENIZER = 'porter unicode61 remove_diacritics 2';
export const PAPERS_FTS = `CREATE VIRTUAL TABLE papers_fts USING fts5(title, content = 'papers', content_rowid = 'ordinal',
  tokenize = '${TITLE_TOKENIZER}')`;

/**
 * The titles by length: the same terms as papers_fts (the same tokenizer), each title's row id its
 * token count (as papers_fts_docsize holds it) times 2^32 plus its ordinal, so a term's titles
 * come shortest first, then by ordinal: the order in which bm25 ranks titles holding each word of
 * a question once. Terms only (detail=none: no positions, no counts), no text, no token counts.
 */
export const PAPERS_BY_LENGTH = `CREATE VIRTUAL TABLE papers_by_length USING fts5(title, content = '', columnsize = 0,
  detail = none, tokenize = '${TITLE_TOKENIZER}')`;
/**
 * The titles holding a term more than once (other than REPEATS_LEFT_OUT), which score more than
 * their length says, by length as in papers_by_length (the same row ids), each with a marker of
 * every such term in `repeated`: the term and 'q' (repeatMarker(term)), and the term, 'q' and how
 * often the title holds it (repeatMarker(term, 2)). A marker ends in 'q' or a digit, which no
 * step of the porter stemmer strips, so it is one term of the index as it is written.
 */
export const PAPERS_REPEATS = `CREATE VIRTUAL TABLE papers_repeats USING fts5(title, repeated, content = '',
  columnsize = 0, detail = column, tokenize = '${TITLE_TOKENIZER}')`;
/** A title's row id in papers_by_length and papers_repeats: its token count in the high bits, its ordinal in the low 32. */
export const BY_LENGTH_SHIFT = 2 ** 32;
/** papers_repeats' marker of a term a title holds more than once (`times`: so many times). */
export const repeatMarker = (term: string, times?: number) => `${term}q${times ?? ''}`;
/**
 * Terms whose repeats do not put a title in papers_repeats: the glue words research leaves out of
 * questions (as the index stems them), which a third of real titles hold twice ("... of ... of
 * ..."). A search naming one of them is not ranked from the titles by length.
 */
export const REPEATS_LEFT_OUT: readonly string[] = [
  'a',
  'an',
  'and',
  'the',
  'of',
  'for',
  'in',
  'on',
  'to',
  'with',
  'by',
  'from',
  'at',
  'is',
  'ar',
  'vs',
  'via',
];

/**
 * Each title term's communities (topic, weight pairs as little-endian int32, heaviest first) and
 * its weight in all; each community's titles and terms' weight (snapshot-build/topic-terms.ts).
 */
export const TOPIC_TERMS = `CREATE TABLE topic_terms (term TEXT PRIMARY KEY, weight INTEGER NOT NULL, topics BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE topic_lengths (topic INTEGER PRIMARY KEY, titles INTEGER NOT NULL, weight INTEGER NOT NULL)`;

export const SNAPSHOT_SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE subjects (
  type TEXT NOT NULL,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT,
  paper_count INTEGER NOT NULL,
  window_papers INTEGER NOT NULL,
  ri REAL NOT NULL,
  ris REAL NOT NULL,
  hri REAL,
  total_ranked INTEGER NOT NULL,
  ranked BLOB NOT NULL,
  extra TEXT NOT NULL,
  PRIMARY KEY (type, id)
);
CREATE TABLE history (
  type TEXT NOT NULL,
  id TEXT NOT NULL,
  resolution TEXT NOT NULL,
  series BLOB NOT NULL,
  PRIMARY KEY (type, id, resolution)
);
CREATE TABLE periods (
  resolution TEXT NOT NULL,
  period TEXT NOT NULL,
  papers INTEGER NOT NULL,
  high_impact_papers INTEGER NOT NULL,
  PRIMARY KEY (resolution, period)
) WITHOUT ROWID;
CREATE TABLE papers (
  ordinal INTEGER PRIMARY KEY,
  work_id INTEGER NOT NULL,
  doi TEXT,
  title TEXT,
  venue TEXT,
  year INTEGER,
  pub_date TEXT,
  citations INTEGER,
  elements TEXT NOT NULL,
  topics TEXT NOT NULL,
  keywords TEXT NOT NULL
);
CREATE TABLE routed_elements (
  type TEXT NOT NULL,
  id TEXT NOT NULL,
  rank INTEGER NOT NULL,
  symbol TEXT NOT NULL,
  share REAL NOT NULL,
  PRIMARY KEY (type, id, rank)
) WITHOUT ROWID;
CREATE TABLE communities (
  topic_id TEXT PRIMARY KEY,
  paper_count INTEGER NOT NULL,
  recent_papers INTEGER NOT NULL,
  ri_recent REAL NOT NULL,
  ri_before REAL NOT NULL,
  rising INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE element_communities (
  symbol TEXT NOT NULL,
  topic_id TEXT NOT NULL,
  paper_count INTEGER NOT NULL,
  recent_papers INTEGER NOT NULL,
  ri_recent REAL NOT NULL,
  ri_before REAL NOT NULL,
  rising INTEGER NOT NULL,
  PRIMARY KEY (symbol, topic_id)
) WITHOUT ROWID;
-- Each subject's papers (headline mapping) as little-endian int32 ordinals, ascending.
CREATE TABLE postings (
  type TEXT NOT NULL,
  id TEXT NOT NULL,
  ordinals BLOB NOT NULL,
  PRIMARY KEY (type, id)
);
-- Whole-corpus columns indexed by ordinal, as little-endian typed arrays (see paper-columns.ts).
CREATE TABLE paper_columns (
  name TEXT PRIMARY KEY,
  data BLOB NOT NULL
);
CREATE VIRTUAL TABLE subjects_fts USING fts5(type UNINDEXED, id UNINDEXED, name, description,
  tokenize = 'porter unicode61 remove_diacritics 2');
-- The topics' rows of subjects_fts alone, under the same rowids (schema 8), and each term's rows
-- in subjects_fts, from which research ranks the topics as subjects_fts's bm25 did (topic-search.ts).
CREATE VIRTUAL TABLE topics_fts USING fts5(id UNINDEXED, name, description,
  tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE subject_terms (term TEXT PRIMARY KEY, rows INTEGER NOT NULL) WITHOUT ROWID;
${PAPERS_FTS};
${PAPERS_BY_LENGTH};
${PAPERS_REPEATS};
${TOPIC_TERMS};
${CHANGE_TABLES};
`;

/** Indexes created after the bulk load (faster than maintaining them row by row). */
export const SUBJECT_INDEXES = `
CREATE INDEX subjects_rank ON subjects (type, ris DESC);
CREATE INDEX changes_subject ON changes (type, id);
`;

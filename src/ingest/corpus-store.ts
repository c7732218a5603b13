import Database from 'better-sqlite3';
import type { TopicRef, WorkRow } from './work-record.js';

/**
 * The corpus store: every kept work, newest version only, in one SQLite file. Ingest writes it
 * (from several worker threads, one transaction per batch); build reads it. Abstracts are never
 * stored. Unknown fields are stored as NULL, never as zero.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS works (
  id INTEGER PRIMARY KEY,
  updated_date TEXT NOT NULL,
  doi TEXT,
  title TEXT,
  year INTEGER,
  pub_date TEXT,
  venue TEXT,
  type TEXT,
  cited_by_count INTEGER,
  counts_by_year TEXT,
  primary_topic INTEGER,
  topics TEXT NOT NULL,
  keywords TEXT,
  refs BLOB,
  elements TEXT NOT NULL,
  tagger_version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS topics (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  description TEXT,
  keywords TEXT,
  subfield_id INTEGER, subfield TEXT,
  field_id INTEGER, field TEXT,
  domain_id INTEGER, domain TEXT
);
CREATE TABLE IF NOT EXISTS keywords (slug TEXT PRIMARY KEY, name TEXT NOT NULL);
`;

export interface BatchCounts {
  kept: number;
  replaced: number;
  unchanged: number;
  removed: number;
}

export interface ExcludedWork {
  id: number;
  updatedDate: string;
}

export interface TaggedWork {
  row: WorkRow;
  elements: string[];
}

export function openCorpusStore(path: string, options: { readonly?: boolean } = {}): CorpusStore {
  return new CorpusStore(path, options.readonly ?? false);
}

export class CorpusStore {
  readonly db: Database.Database;
  private readonly lookup: Database.Statement<[number], { updated_date: string }>;
  private readonly upsert: Database.Statement;
  private readonly remove: Database.Statement<[number, string]>;
  private readonly addTopic: Database.Statement;
  private readonly addKeyword: Database.Statement;
  private readonly knownTopics = new Set<number>();
  private readonly knownKeywords = new Set<string>();

  constructor(path: string, readonly: boolean) {
    this.db = new Database(path, { readonly, fileMustExist: readonly });
    this.db.pragma('busy_timeout = 120000');
    if (!readonly) {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.exec(SCHEMA);
    }
    this.db.pragma('cache_size = -262144');
    this.lookup = this.db.prepare('SELECT updated_date FROM works WHERE id = ?');
    this.upsert = this.db.prepare(
      `INSERT OR REPLACE INTO works (id, updated_date, doi, title, year, pub_date, venue, type, cited_by_count,
        counts_by_year, primary_topic, topics, keywords, refs, elements, tagger_version)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.remove = this.db.prepare('DELETE FROM works WHERE id = ? AND updated_date < ?');
    this.addTopic = this.db.prepare(
      `INSERT OR IGNORE INTO topics (id, name, subfield_id, subfield, field_id, field, domain_id, domain)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.addKeyword = this.db.prepare('INSERT OR IGNORE INTO keywords (slug, name) VALUES (?, ?)');
  }

  /**
   * Writes one batch in one transaction. A record replaces the stored one only when its
   * updated_date is strictly newer, so ingesting the same file twice changes nothing. An excluded
   * (retracted or paratext) newer version removes the older stored record.
   */
  writeBatch(works: readonly TaggedWork[], excluded: readonly ExcludedWork[], taggerVersion: number): BatchCounts {
    const counts: BatchCounts = { kept: 0, replaced: 0, unchanged: 0, removed: 0 };
    this.db.transaction(() => {
      for (const { row, elements } of works) {
        const existing = this.lookup.get(row.id);
        if (existing && existing.updated_date >= row.updatedDate) {
          counts.unchanged++;
          continue;
        }
        if (existing) counts.replaced++;
        else counts.kept++;
        this.upsert.run(...workParams(row, elements, taggerVersion));
        this.rememberVocabulary(row);
      }
      for (const e of excluded) counts.removed += this.remove.run(e.id, e.updatedDate).changes;
    }).immediate();
    return counts;
  }

  private rememberVocabulary(row: WorkRow): void {
    const topics = row.primaryTopic ? [row.primaryTopic, ...row.topics] : row.topics;
    for (const t of topics) {
      if (this.knownTopics.has(t.id)) continue;
      this.knownTopics.add(t.id);
      this.addTopic.run(...topicParams(t));
    }
    for (const k of row.keywords ?? []) {
      if (this.knownKeywords.has(k.slug)) continue;
      this.knownKeywords.add(k.slug);
      this.addKeyword.run(k.slug, k.name);
    }
  }

  /** Loads the topic taxonomy (names, descriptions, keywords); descriptions describe communities. */
  loadTaxonomy(topics: readonly TaxonomyTopic[]): number {
    const stmt = this.db.prepare(
      `INSERT INTO topics (id, name, description, keywords, subfield_id, subfield, field_id, field, domain_id, domain)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET name = excluded.name, description = excluded.description,
         keywords = excluded.keywords, subfield_id = excluded.subfield_id, subfield = excluded.subfield,
         field_id = excluded.field_id, field = excluded.field, domain_id = excluded.domain_id, domain = excluded.domain`,
    );
    this.db.transaction(() => {
      for (const t of topics) {
        stmt.run(
          t.id,
          t.name,
          t.description,
          JSON.stringify(t.keywords),
          t.subfieldId,
          t.subfield,
          t.fieldId,
          t.field,
          t.domainId,
          t.domain,
        );
      }
    })();
    return topics.length;
  }

  countWorks(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM works').get() as { n: number }).n;
  }

  close(): void {
    this.db.close();
  }
}

export interface TaxonomyTopic {
  id: number;
  name: string;
  description: string | null;
  keywords: string[];
  subfieldId: number | null;
  subfield: string | null;
  fieldId: number | null;
  field: string | null;
  domainId: number | null;
  domain: string | null;
}

function topicParams(t: TopicRef) {
  return [t.id, t.name, t.subfieldId, t.subfield, t.fieldId, t.field, t.domainId, t.domain] as const;
}

/** Referenced work ids as little-endian float64 (ids exceed 2^32 but stay below 2^53). */
export function encodeRefs(ids: readonly number[]): Buffer {
  return Buffer.from(Float64Array.from(ids).buffer);
}

export function decodeRefs(blob: Buffer): Float64Array {
  const copy = new Uint8Array(blob.byteLength);
  copy.set(blob);
  return new Float64Array(copy.buffer);
}

function workParams(row: WorkRow, elements: string[], taggerVersion: number) {
  const topicPairs = row.topics.map((t) => [t.id, t.score]);
  return [
    row.id,
    row.updatedDate,
    row.doi,
    row.title,
    row.year,
    row.publicationDate,
    row.venue,
    row.type,
    row.citedByCount,
    row.countsByYear ? JSON.stringify(row.countsByYear) : null,
    row.primaryTopic?.id ?? null,
    JSON.stringify(topicPairs),
    row.keywords ? JSON.stringify(row.keywords.map((k) => [k.slug, k.score])) : null,
    row.referencedWorks ? encodeRefs(row.referencedWorks) : null,
    elements.join(','),
    taggerVersion,
  ] as const;
}

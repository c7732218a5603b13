import { createHash, randomUUID } from 'node:crypto';
import { type DuckDBConnection, type DuckDBDataChunk, DuckDBInstance } from '@duckdb/node-api';
import { duckdbLimitNow } from '../config/memory-budget.js';
import type { TaxonomyTopic } from './corpus-store-types.js';
import { titleKeysSql } from './paper-record.js';

export type { TaxonomyTopic } from './corpus-store-types.js';

/**
 * The corpus store: every kept work, newest version only, in one DuckDB file. DuckDB reads the
 * OpenAlex JSON itself (its reader parses only the declared fields, in C++, on all cores) and
 * merges a batch with set operations, so ingest never materialises a record in JavaScript.
 * Abstracts are never read. Unknown fields stay NULL, never zero.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS works (
  id BIGINT NOT NULL,
  updated_date VARCHAR NOT NULL,
  doi VARCHAR,
  title VARCHAR,
  year INTEGER,
  pub_date VARCHAR,
  venue VARCHAR,
  type VARCHAR,
  cited_by_count INTEGER,
  counts_by_year STRUCT(year INTEGER, cited_by_count INTEGER)[],
  primary_topic INTEGER,
  field_id INTEGER,
  topics STRUCT(id INTEGER, score DOUBLE)[],
  keywords STRUCT(slug VARCHAR, score DOUBLE)[],
  refs BIGINT[]
);
CREATE TABLE IF NOT EXISTS tags (id BIGINT NOT NULL, symbols VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS topics (
  id INTEGER NOT NULL, name VARCHAR NOT NULL, description VARCHAR, keywords VARCHAR,
  subfield VARCHAR, field_id INTEGER, field VARCHAR, domain VARCHAR
);
CREATE TABLE IF NOT EXISTS keywords (slug VARCHAR NOT NULL, name VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key VARCHAR NOT NULL, value VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS changes (id BIGINT NOT NULL, gen BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS title_keys (id BIGINT NOT NULL, updated_date VARCHAR NOT NULL, k UBIGINT);
ALTER TABLE changes ADD COLUMN IF NOT EXISTS k UBIGINT;
`;

/**
 * The change log the incremental build reads (src/scoring/corpus-cache.ts). Every merge that
 * changes works is one generation: the ids it added, replaced or removed are logged with it, in
 * the same transaction. `logged_after` is the generation after which the log is complete: a
 * build cache of an older generation cannot know what changed since, and is not used. `store_id`
 * names this store, so a cache of another (or a re-created) store is never taken for its own.
 */
export interface StoreState {
  storeId: string;
  generation: number;
  loggedAfter: number;
}

/** The OpenAlex fields ingest reads, with the types DuckDB must find (a mismatch fails the fast path). */
export const OPENALEX_COLUMNS = `{
  id: 'VARCHAR', doi: 'VARCHAR', title: 'VARCHAR', display_name: 'VARCHAR',
  publication_year: 'INTEGER', publication_date: 'VARCHAR',
  primary_location: 'STRUCT(source STRUCT(display_name VARCHAR))', type: 'VARCHAR',
  cited_by_count: 'INTEGER', counts_by_year: 'STRUCT(year INTEGER, cited_by_count INTEGER)[]',
  primary_topic: 'STRUCT(id VARCHAR, display_name VARCHAR, subfield STRUCT(display_name VARCHAR), field STRUCT(id VARCHAR, display_name VARCHAR), domain STRUCT(display_name VARCHAR))',
  topics: 'STRUCT(id VARCHAR, display_name VARCHAR, score DOUBLE)[]',
  keywords: 'STRUCT(id VARCHAR, display_name VARCHAR, score DOUBLE)[]',
  referenced_works: 'VARCHAR[]', is_retracted: 'BOOLEAN', is_paratext: 'BOOLEAN', updated_date: 'VARCHAR'
}`;

const OA = 'https://openalex.org/';

/**
 * From the raw JSON columns to the stored row (ids as numbers, DOIs without the resolver), but
 * topics and keywords raw: the merge reads their names too, and turns them into the stored form
 * only for the rows it inserts (WORK_SELECT), so staging holds one copy of each list.
 */
const STAGE_SELECT = `
  TRY_CAST(replace(id, '${OA}W', '') AS BIGINT) AS id,
  coalesce(updated_date, '') AS updated_date,
  nullif(lower(regexp_replace(doi, '^https?://(dx\\.)?doi\\.org/', '')), '') AS doi,
  nullif(coalesce(display_name, title), '') AS title,
  coalesce(publication_year, TRY_CAST(substr(publication_date, 1, 4) AS INTEGER)) AS year,
  CASE WHEN regexp_full_match(publication_date, '\\d{4}-\\d{2}-\\d{2}') THEN publication_date END AS pub_date,
  primary_location.source.display_name AS venue,
  type,
  cited_by_count,
  counts_by_year,
  TRY_CAST(replace(primary_topic.id, '${OA}T', '') AS INTEGER) AS primary_topic,
  TRY_CAST(replace(primary_topic.field.id, '${OA}fields/', '') AS INTEGER) AS field_id,
  list_filter(list_transform(referenced_works, r -> TRY_CAST(replace(r, '${OA}W', '') AS BIGINT)), r -> r IS NOT NULL) AS refs,
  coalesce(is_retracted, false) AS is_retracted,
  coalesce(is_paratext, false) AS is_paratext,
  primary_topic AS primary_topic_raw,
  topics AS topics_raw,
  keywords AS keywords_raw,
  filename`;

/** A staged row (alias s) in the stored form, in the column order of the works table. */
const WORK_SELECT = `s.id, s.updated_date, s.doi, s.title, s.year, s.pub_date, s.venue, s.type, s.cited_by_count,
  s.counts_by_year, s.primary_topic, s.field_id,
  list_transform(s.topics_raw, t -> {'id': TRY_CAST(replace(t.id, '${OA}T', '') AS INTEGER), 'score': t.score}) AS topics,
  list_transform(s.keywords_raw, k -> {'slug': replace(k.id, '${OA}keywords/', ''), 'score': k.score}) AS keywords, s.refs`;

export interface MergeCounts {
  read: number;
  kept: number;
  replaced: number;
  unchanged: number;
  removed: number;
  retracted: number;
  paratext: number;
  invalid: number;
}

/** The limit the cache is evicted down to (releaseCache). */
const RELEASE_LIMIT = '32MB';

const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

export class CorpusStore {
  private constructor(
    private readonly instance: DuckDBInstance,
    readonly con: DuckDBConnection,
    /** DuckDB's memory_limit as it was set (releaseCache sets it back). */
    private memoryLimit: string,
    private readonly budgetMb: number | undefined,
  ) {}

  static async open(path: string, options: StoreOptions = {}): Promise<CorpusStore> {
    const memoryLimit = options.memoryLimit ?? '1GB';
    const instance = await DuckDBInstance.create(path, {
      threads: String(options.threads ?? 2),
      memory_limit: memoryLimit,
      preserve_insertion_order: 'false',
    });
    const con = await instance.connect();
    await con.run(SCHEMA);
    return new CorpusStore(instance, con, memoryLimit, options.budgetMb);
  }

  /**
   * Lets go of DuckDB's cache of the store's table blocks (BASE_TABLE in duckdb_memory(): 248 MB
   * after a 1M build's load, up to its whole memory_limit at 10M), which it keeps until its limit
   * is reached: lowering the limit evicts them, and the limit is set back at once (a cache is only
   * filled again by reads). Called before work in JavaScript that needs the memory (the build's
   * scoring, its titles' index). A limit DuckDB cannot shrink to (its temporary tables pinned)
   * leaves the cache as it was.
   */
  async releaseCache(): Promise<void> {
    try {
      await this.con.run(`SET memory_limit = '${RELEASE_LIMIT}'`);
    } catch {
      // Not evicted: the build goes on with the cache in memory.
    } finally {
      await this.con.run(`SET memory_limit = ${sqlString(this.memoryLimit)}`);
    }
  }

  /**
   * Sets DuckDB's memory_limit to what the budget (StoreOptions.budgetMb) leaves beside what the
   * process holds outside DuckDB now (duckdbLimitNow), its cache let go first; the limit in MB,
   * or null without a budget (the limit stays as opened). Called before the phases in which DuckDB
   * sorts and joins the whole corpus while the build's columns are held.
   */
  async fitToBudget(): Promise<number | null> {
    if (this.budgetMb === undefined) return null;
    await this.releaseCache();
    const duckdbBytes = await this.scalar<number>(
      'SELECT coalesce(sum(memory_usage_bytes), 0)::DOUBLE FROM duckdb_memory()',
    );
    const mb = duckdbLimitNow(this.budgetMb, process.memoryUsage.rss() / 2 ** 20, duckdbBytes / 2 ** 20);
    this.memoryLimit = `${mb}MB`;
    await this.con.run(`SET memory_limit = '${this.memoryLimit}'`);
    return mb;
  }

  /** Rows as plain JS objects (BIGINT as bigint: cast in SQL where a number is wanted). */
  async rows<T = Record<string, unknown>>(sql: string): Promise<T[]> {
    return (await this.con.runAndReadAll(sql)).getRowObjectsJS() as T[];
  }

  async columns(sql: string): Promise<unknown[][]> {
    return (await this.con.runAndReadAll(sql)).getColumnsJS() as unknown[][];
  }

  /**
   * Streams a query's rows chunk by chunk (about 2,048 rows each) without converting the whole
   * result: the callback reads the vectors it needs with getItem.
   */
  async forEachChunk(sql: string, onChunk: (chunk: DuckDBDataChunk) => void): Promise<void> {
    const result = await this.con.stream(sql);
    // The next chunk is asked for before this one is handled, so DuckDB makes it meanwhile.
    let next = result.fetchChunk();
    for (;;) {
      const chunk = await next;
      if (!chunk || chunk.rowCount === 0) break;
      next = result.fetchChunk();
      next.catch(() => {}); // awaited at the next turn; a handler that throws first must not leave it unhandled
      onChunk(chunk);
    }
  }

  /** Integer columns of a query (NULL as the given value), as typed arrays. */
  async intColumns(sql: string, columns: number, nullValue = -1, expectedRows = 0): Promise<Int32Array[]> {
    const out = Array.from({ length: columns }, () => new Growable(Int32Array, expectedRows));
    await this.forEachChunk(sql, (chunk) => readNumbers(chunk, out, nullValue));
    return out.map((g) => g.finish());
  }

  /**
   * A query whose first column is each row's place (0 .. length - 1 of the targets): every other
   * column's value is written at that place of its target, NULL as the target's `nullTo`. No
   * column is held beside the targets (read into columns first, then placed, the load's columns
   * took twice their size at 10M works). Returns the rows read; a place out of range throws.
   */
  async placeColumns(
    sql: string,
    targets: { array: Int16Array | Int32Array | Float64Array; nullTo: number }[],
  ): Promise<number> {
    let rows = 0;
    const size = targets[0]?.array.length ?? 0;
    await this.forEachChunk(sql, (chunk) => {
      const places = chunk.getColumnVector(0);
      const vectors = targets.map((_, c) => chunk.getColumnVector(c + 1));
      for (let i = 0; i < chunk.rowCount; i++) {
        const at = places.getItem(i) as number;
        if (!(at >= 0 && at < size)) throw new Error('the corpus store changed while the build read it');
        for (let c = 0; c < targets.length; c++) {
          const { array, nullTo } = targets[c]!;
          array[at] = (vectors[c]!.getItem(i) as number | null) ?? nullTo;
        }
      }
      rows += chunk.rowCount;
    });
    return rows;
  }

  /** Number columns of a query (DOUBLE in SQL; NULL as NaN), as Float64Arrays. */
  async doubleColumns(sql: string, columns: number): Promise<Float64Array[]> {
    const out = Array.from({ length: columns }, () => new Growable(Float64Array));
    await this.forEachChunk(sql, (chunk) => readNumbers(chunk, out, Number.NaN));
    return out.map((g) => g.finish());
  }

  async scalar<T>(sql: string): Promise<T> {
    return (await this.con.runAndReadAll(sql)).getColumnsJS()[0]?.[0] as T;
  }

  /**
   * Reads works files (OpenAlex JSONL, plain or gzip) and merges them: a record replaces the
   * stored one only when its updated_date is strictly newer, so the same file twice changes
   * nothing; a newer excluded version (retracted, paratext) removes the stored one. Throws when
   * DuckDB cannot read a file as OpenAlex works (the caller then takes the line-by-line path).
   */
  async mergeFiles(files: readonly string[]): Promise<{ counts: MergeCounts; invalidFiles: string[] }> {
    await this.stage(files);
    // Records with no usable work id: the caller re-reads their files line by line to say where.
    const invalidFiles = ((await this.columns('SELECT DISTINCT filename FROM staged WHERE id IS NULL'))[0] ??
      []) as string[];
    if (invalidFiles.length > 0) {
      await this.con.run(`DELETE FROM staged WHERE filename IN (${invalidFiles.map(sqlString).join(', ')})`);
    }
    return { counts: await this.mergeStaged(), invalidFiles };
  }

  /** Merges normalised records written by the line-by-line path (same layout as OpenAlex). */
  async mergeNormalised(file: string): Promise<MergeCounts> {
    await this.stage([file]);
    return this.mergeStaged();
  }

  /** Reads files into the temporary table `staged`, already in the stored form. */
  private async stage(files: readonly string[]): Promise<void> {
    await this.con.run('DROP TABLE IF EXISTS staged');
    await this.con.run(
      `CREATE TEMP TABLE staged AS SELECT ${STAGE_SELECT}
       FROM read_json([${files.map(sqlString).join(', ')}], format = 'newline_delimited', columns = ${OPENALEX_COLUMNS},
         maximum_object_size = 67108864, filename = true, hive_partitioning = false)`,
    );
  }

  private async mergeStaged(): Promise<MergeCounts> {
    const c = this.con;
    await c.run('DROP TABLE IF EXISTS newer; DROP TABLE IF EXISTS latest');
    // The latest copy of each work in this batch (found on narrow columns, then joined back),
    // kept only where it is newer than what is stored. Copies with the same updated_date: one wins.
    await c.run(
      'CREATE TEMP TABLE latest AS SELECT arg_max(rowid, updated_date) AS r FROM staged WHERE id IS NOT NULL GROUP BY id',
    );
    // An older copy in the same batch counts as a record that was replaced (as if read one by one).
    const supersededRows =
      await this.columns(`SELECT count(*) FILTER (WHERE s.updated_date > coalesce(w.updated_date, '')),
        count(*) FILTER (WHERE s.updated_date <= coalesce(w.updated_date, ''))
      FROM staged s ANTI JOIN latest ON s.rowid = latest.r LEFT JOIN works w ON w.id = s.id
      WHERE s.id IS NOT NULL AND NOT s.is_retracted AND NOT s.is_paratext`);
    const superseded = Number(supersededRows[0]?.[0] ?? 0);
    // The staged rows that change the store, by row number only: the wide columns are read once,
    // when inserted (a copy of them all cost as much as the insert).
    await c.run(`CREATE TEMP TABLE newer AS
      SELECT s.rowid AS r, s.id, w.id IS NOT NULL AS existed, s.is_retracted OR s.is_paratext AS excluded
      FROM staged s
      JOIN latest ON s.rowid = latest.r
      LEFT JOIN works w ON w.id = s.id
      WHERE w.id IS NULL OR s.updated_date > w.updated_date`);
    const newerStaged = 'staged s SEMI JOIN newer n ON s.rowid = n.r';
    await c.run('BEGIN TRANSACTION');
    try {
      await c.run('DELETE FROM works WHERE id IN (SELECT id FROM newer WHERE existed)');
      await c.run('DELETE FROM tags WHERE id IN (SELECT id FROM newer WHERE existed)');
      await c.run(
        `INSERT INTO works SELECT ${WORK_SELECT} FROM staged s SEMI JOIN newer n ON s.rowid = n.r AND NOT n.excluded`,
      );
      // Logged with each work's title key before the change (its key is gone with a removed work).
      await this.logChanges('SELECT id FROM newer');
      // The title's version key (ingest/paper-record.ts), made once per record here: a pass of
      // regular expressions over every title at each build cost seconds at 1M works.
      await c.run('DELETE FROM title_keys WHERE id IN (SELECT id FROM newer)');
      await c.run(
        `INSERT INTO title_keys ${titleKeysSql('staged s SEMI JOIN newer n ON s.rowid = n.r AND NOT n.excluded')}`,
      );
      // Names of topics and keywords the taxonomy does not have (the works carry them). Copies
      // may spell a name differently: the pick is the first by one fixed order over every copy
      // seen so far, in this batch or an earlier one, so neither the order the parallel reader
      // staged rows in nor the way files were split into batches (--watch takes one at a time)
      // changes the snapshot and its data_version. Taxonomy rows (keywords set) are never touched.
      await c.run(`CREATE OR REPLACE TEMP TABLE topic_names AS
        SELECT DISTINCT ON (id) id, name, subfield, field_id, field, domain FROM (
          SELECT id, name, subfield, field_id, field, domain FROM topics WHERE keywords IS NULL
          UNION ALL
          SELECT primary_topic AS id, primary_topic_raw.display_name AS name, primary_topic_raw.subfield.display_name AS subfield,
                 field_id, primary_topic_raw.field.display_name AS field, primary_topic_raw.domain.display_name AS domain
          FROM ${newerStaged} WHERE primary_topic IS NOT NULL
          UNION ALL
          SELECT TRY_CAST(replace(t.id, 'https://openalex.org/T', '') AS INTEGER), t.display_name, NULL, NULL, NULL, NULL
          FROM (SELECT unnest(topics_raw) AS t FROM ${newerStaged}))
        WHERE id IS NOT NULL AND name IS NOT NULL AND id NOT IN (SELECT id FROM topics WHERE keywords IS NOT NULL)
        ORDER BY id, subfield IS NULL, name, subfield, field, domain`);
      await c.run('DELETE FROM topics WHERE keywords IS NULL AND id IN (SELECT id FROM topic_names)');
      await c.run(`INSERT INTO topics (id, name, subfield, field_id, field, domain)
        SELECT id, name, subfield, field_id, field, domain FROM topic_names ORDER BY id`);
      // A keyword's name is the least of every spelling seen, whatever batch brought it, so files
      // ingested one at a time (as --watch does) name keywords as one run over them all does.
      await c.run(`CREATE OR REPLACE TEMP TABLE keyword_names AS
        SELECT replace(k.id, 'https://openalex.org/keywords/', '') AS slug, min(k.display_name) AS name
        FROM (SELECT unnest(keywords_raw) AS k FROM ${newerStaged})
        WHERE k.id IS NOT NULL AND k.display_name IS NOT NULL
        GROUP BY 1`);
      await c.run(`UPDATE keywords SET name = n.name FROM keyword_names n
        WHERE keywords.slug = n.slug AND n.name < keywords.name`);
      await c.run(`INSERT INTO keywords SELECT slug, name FROM keyword_names
        WHERE slug NOT IN (SELECT slug FROM keywords) ORDER BY slug`);
      const [row] = await this.rows<Record<keyof MergeCounts, bigint | number>>(`SELECT
        (SELECT count(*) FROM staged) AS read,
        (SELECT count(*) FROM staged WHERE id IS NULL) AS invalid,
        (SELECT count(*) FROM staged WHERE id IS NOT NULL AND is_retracted) AS retracted,
        (SELECT count(*) FROM staged WHERE id IS NOT NULL AND is_paratext AND NOT is_retracted) AS paratext,
        (SELECT count(*) FROM newer WHERE NOT existed AND NOT excluded) AS kept,
        (SELECT count(*) FROM newer WHERE existed AND NOT excluded) AS replaced,
        (SELECT count(*) FROM newer WHERE existed AND excluded) AS removed`);
      await c.run('COMMIT');
      const n = (k: keyof MergeCounts) => Number(row?.[k] ?? 0);
      const counts: MergeCounts = {
        read: n('read'),
        invalid: n('invalid'),
        retracted: n('retracted'),
        paratext: n('paratext'),
        kept: n('kept'),
        replaced: n('replaced') + superseded,
        removed: n('removed'),
        unchanged: 0,
      };
      counts.unchanged =
        counts.read - counts.invalid - counts.retracted - counts.paratext - counts.kept - counts.replaced;
      return counts;
    } catch (e) {
      await c.run('ROLLBACK');
      throw e;
    } finally {
      await c.run(
        'DROP TABLE IF EXISTS staged; DROP TABLE IF EXISTS newer; DROP TABLE IF EXISTS latest; DROP TABLE IF EXISTS keyword_names; DROP TABLE IF EXISTS topic_names',
      );
    }
  }

  /** The store's identity and change-log position (created on first use). */
  async state(): Promise<StoreState> {
    const rows = await this.rows<{ key: string; value: string }>(
      "SELECT key, max(value) AS value FROM meta WHERE key IN ('store_id', 'generation', 'logged_after') GROUP BY key",
    );
    const get = (k: string) => rows.find((r) => r.key === k)?.value;
    let storeId = get('store_id');
    if (storeId === undefined) {
      storeId = randomUUID();
      await this.con.run(`INSERT INTO meta VALUES ('store_id', '${storeId}')`);
    }
    return {
      storeId,
      generation: Number(get('generation') ?? 0),
      loggedAfter: Number(get('logged_after') ?? 0),
    };
  }

  /**
   * Starts a new generation and logs the ids the query names as changed in it, each with its title
   * key as stored until then (NULL for a new work): the incremental load finds by it the versions
   * of a work that was removed or retitled, which may be shown now in its place (scoring/corpus.ts).
   * Runs inside the caller's transaction, so the log and the change commit (or roll back) together.
   */
  private async logChanges(idsQuery: string): Promise<void> {
    const gen = (await this.state()).generation + 1;
    await this.con.run(`INSERT INTO changes (id, gen, k)
      SELECT c.id, ${gen}, t.k FROM (${idsQuery}) c LEFT JOIN title_keys t USING (id)`);
    await this.setMeta('generation', String(gen));
  }

  private async setMeta(key: string, value: string): Promise<void> {
    await this.con.run(`DELETE FROM meta WHERE key = ${sqlString(key)}`);
    await this.con.run(`INSERT INTO meta VALUES (${sqlString(key)}, ${sqlString(value)})`);
  }

  /**
   * Forgets the log up to a generation (a build cache of it is written): caches older than that
   * can no longer be brought up to date and are refused.
   */
  async pruneChanges(throughGeneration: number): Promise<void> {
    await this.con.run('BEGIN TRANSACTION');
    try {
      await this.con.run(`DELETE FROM changes WHERE gen <= ${throughGeneration}`);
      const { loggedAfter } = await this.state();
      if (throughGeneration > loggedAfter) await this.setMeta('logged_after', String(throughGeneration));
      await this.con.run('COMMIT');
    } catch (e) {
      await this.con.run('ROLLBACK');
      throw e;
    }
  }

  /** Loads the topic taxonomy (names, descriptions, keywords); descriptions describe communities. */
  async loadTaxonomy(topics: readonly TaxonomyTopic[]): Promise<number> {
    // Every ingest (and so every `ri update`) loads the bundled taxonomy again: when the store
    // holds these very topics (their digest, written with them; nothing else writes rows of
    // taxonomy topics), writing them again would cost a rewrite and a checkpoint when the store
    // closes, about 0.45 s at 1M works, for the same table.
    const digest = createHash('sha256').update(JSON.stringify(topics)).digest('hex');
    const stored = await this.scalar<string | null>(
      "SELECT max(value) FROM meta WHERE key = 'taxonomy_digest'",
    );
    if (stored === digest) return topics.length;
    await this.con.run('BEGIN TRANSACTION');
    try {
      const ids = topics.map((t) => t.id).join(',') || 'NULL';
      await this.con.run(`DELETE FROM topics WHERE id IN (${ids})`);
      const appender = await this.con.createAppender('topics');
      for (const t of topics) {
        appender.appendInteger(t.id);
        appender.appendVarchar(t.name);
        appendNullable(appender, t.description);
        appender.appendVarchar(JSON.stringify(t.keywords));
        appendNullable(appender, t.subfield);
        if (t.fieldId === null) appender.appendNull();
        else appender.appendInteger(t.fieldId);
        appendNullable(appender, t.field);
        appendNullable(appender, t.domain);
        appender.endRow();
      }
      appender.closeSync();
      await this.setMeta('taxonomy_digest', digest);
      await this.con.run('COMMIT');
    } catch (e) {
      await this.con.run('ROLLBACK');
      throw e;
    }
    return topics.length;
  }

  /**
   * Makes `taggerVersion` the tagger of the stored tags: when another version made them, they all
   * go, so every title is tagged again; every work changes, so no build cache stays valid (the
   * change log starts over).
   */
  async useTagger(taggerVersion: number): Promise<void> {
    const stored = await this.scalar<string | null>(
      "SELECT max(value) FROM meta WHERE key = 'tagger_version'",
    );
    if (stored === String(taggerVersion)) return;
    await this.con.run('BEGIN TRANSACTION');
    await this.con.run('DELETE FROM tags');
    await this.setMeta('tagger_version', String(taggerVersion));
    const gen = (await this.state()).generation + 1;
    await this.setMeta('generation', String(gen));
    await this.setMeta('logged_after', String(gen));
    await this.con.run('DELETE FROM changes');
    await this.con.run('COMMIT');
  }

  /** The works whose titles have no tags yet (new or replaced since the tag step last ran). */
  /**
   * The works without tags from the tagger in use (id, title), in batches of about `size`, each
   * handed to `onBatch` and awaited before more is read: the whole corpus's titles are never in
   * memory at once (10M titles read in one took ingest's peak to 5.2 GB).
   */
  async forEachUntagged(
    size: number,
    onBatch: (ids: number[], titles: (string | null)[]) => Promise<void>,
  ): Promise<void> {
    const result = await this.con.stream(
      'SELECT w.id::DOUBLE, w.title FROM works w ANTI JOIN tags t ON t.id = w.id',
    );
    let ids: number[] = [];
    let titles: (string | null)[] = [];
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const [id, title] = [chunk.getColumnVector(0), chunk.getColumnVector(1)];
      for (let i = 0; i < chunk.rowCount; i++) {
        ids.push(id.getItem(i) as number);
        titles.push(title.getItem(i) as string | null);
      }
      if (ids.length >= size) {
        await onBatch(ids, titles);
        [ids, titles] = [[], []];
      }
    }
    if (ids.length > 0) await onBatch(ids, titles);
  }

  /** A temporary table `name` (id BIGINT) of the given work ids, made anew. */
  async idTable(name: string, ids: Iterable<number>): Promise<void> {
    await this.con.run(`CREATE OR REPLACE TEMP TABLE ${name} (id BIGINT)`);
    const appender = await this.con.createAppender(name);
    for (const id of ids) {
      appender.appendBigInt(BigInt(id));
      appender.endRow();
    }
    appender.closeSync();
  }

  /** How many works have no tags from the tagger in use. */
  async countUntagged(): Promise<number> {
    return Number(await this.scalar<bigint>('SELECT count(*) FROM works w ANTI JOIN tags t ON t.id = w.id'));
  }

  async saveTags(ids: readonly number[], symbols: readonly string[]): Promise<void> {
    const appender = await this.con.createAppender('tags');
    for (let i = 0; i < ids.length; i++) {
      appender.appendBigInt(BigInt(ids[i]!));
      appender.appendVarchar(symbols[i]!);
      appender.endRow();
    }
    appender.closeSync();
  }

  async countWorks(): Promise<number> {
    return Number(await this.scalar<bigint>('SELECT count(*) FROM works'));
  }

  close(): void {
    this.con.closeSync();
    this.instance.closeSync();
  }
}

function appendNullable(
  appender: { appendVarchar(v: string): void; appendNull(): void },
  v: string | null,
): void {
  if (v === null) appender.appendNull();
  else appender.appendVarchar(v);
}

type NumberArray = Int32Array | Float64Array;

class Growable<T extends NumberArray> {
  private data: T;
  private length = 0;

  /** expected: rows the caller expects (an upper bound avoids regrowing tens of millions of values). */
  constructor(
    private readonly Kind: { new (n: number): T },
    expected = 0,
  ) {
    this.data = new Kind(Math.max(1 << 16, expected));
  }

  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new this.Kind(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }

  /** The values; a view when the buffer is nearly full (no copy of a large array), else a copy. */
  finish(): T {
    if (this.length >= this.data.length * 0.9) return this.data.subarray(0, this.length) as T;
    return this.data.slice(0, this.length) as T;
  }
}

function readNumbers(chunk: DuckDBDataChunk, out: Growable<NumberArray>[], nullValue: number): void {
  const n = chunk.rowCount;
  for (let c = 0; c < out.length; c++) {
    const vector = chunk.getColumnVector(c);
    const target = out[c]!;
    for (let i = 0; i < n; i++) target.push((vector.getItem(i) as number | null) ?? nullValue);
  }
}

/** DuckDB's threads (default 2) and memory_limit (default 1GB; the CLI sets it from BUILD_MEMORY_MB). */
export interface StoreOptions {
  threads?: number;
  memoryLimit?: string;
  /** The batch job's whole memory budget in MB (BUILD_MEMORY_MB), which fitToBudget keeps to. */
  budgetMb?: number;
}

export function openCorpusStore(path: string, options?: StoreOptions): Promise<CorpusStore> {
  return CorpusStore.open(path, options);
}

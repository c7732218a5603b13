import { copyFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { BY_LENGTH_SHIFT, REPEATS_LEFT_OUT, repeatMarker } from '../../../src/snapshot/schema.js';
import { varint } from '../../../src/snapshot/title-stats.js';
import { buildTitleIndex, startTitleIndex } from '../../../src/snapshot-build/title-index.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

/**
 * The titles' full-text index is built in a side file on a thread of its own and copied into the
 * snapshot. The oracle: FTS5 rebuilding the index in place, in the snapshot itself, from the same
 * paper rows with the same settings; both must hold the same rows, and FTS5's own integrity check
 * (which reads every title again) must pass on the copy.
 */
const INDEX_TABLES = ['data', 'idx', 'docsize', 'config'].map((t) => `papers_fts_${t}`);
/** The titles by length's tables (schema 9). */
const BY_LENGTH_TABLES = ['papers_by_length', 'papers_repeats'].flatMap((f) =>
  ['data', 'idx', 'config'].map((t) => `${f}_${t}`),
);

let published: string;
let dir: string;

/**
 * A table's rows; in the structure record (id 10 of _data) without its first 4 bytes, a counter
 * of the structure's writes (a rebuild in place over an index writes it more often).
 */
const tableRows = (db: Database.Database, table: string) =>
  db
    .prepare(`SELECT * FROM ${table} ORDER BY 1, 2`)
    .raw()
    .all()
    .map((row) => {
      const [id, block] = row as [unknown, unknown];
      return table === 'papers_fts_data' && id === 10 ? [id, (block as Buffer).subarray(4)] : row;
    });

beforeAll(async () => {
  const sample = await sampleDataDir();
  published = snapshotFile(sample.snapshots, sample.version);
  dir = tempDir('ri-title-index-');
}, 60_000);

describe('the titles full-text index', () => {
  it('is row for row the index FTS5 rebuilds in place, and passes its integrity check', () => {
    const inPlace = join(dir, 'in-place.sqlite');
    copyFileSync(published, inPlace);
    const rebuilt = new Database(inPlace);
    rebuilt.exec(`INSERT INTO papers_fts (papers_fts, rank) VALUES ('hashsize', ${64 << 20})`);
    rebuilt.exec("INSERT INTO papers_fts (papers_fts, rank) VALUES ('pgsz', 8000)");
    rebuilt.exec("INSERT INTO papers_fts (papers_fts) VALUES ('rebuild')");
    const copied = new Database(published, { readonly: true });
    try {
      expect(copied.prepare('SELECT count(*) FROM papers_fts_docsize').pluck().get()).toBeGreaterThan(1000);
      for (const table of INDEX_TABLES) expect(tableRows(copied, table)).toEqual(tableRows(rebuilt, table));
      // The integrity check compares the index with every title of the paper rows.
      rebuilt.exec(`ATTACH '${published}' AS copied`);
      expect(() =>
        rebuilt.exec("INSERT INTO copied.papers_fts (papers_fts, rank) VALUES ('integrity-check', 1)"),
      ).not.toThrow();
      const hits = copied
        .prepare(
          "SELECT rowid FROM papers_fts WHERE papers_fts MATCH 'iron OR oxide' ORDER BY bm25(papers_fts), rowid LIMIT 50",
        )
        .pluck()
        .all();
      expect(hits.length).toBe(50);
      expect(
        rebuilt
          .prepare(
            "SELECT rowid FROM main.papers_fts WHERE papers_fts MATCH 'iron OR oxide' ORDER BY bm25(papers_fts), rowid LIMIT 50",
          )
          .pluck()
          .all(),
      ).toEqual(hits);
    } finally {
      copied.close();
      rebuilt.close();
    }
  });

  it('is the same built in its worker thread as on this one, and says when the titles are read', async () => {
    const onThread = join(dir, 'on-thread-titles');
    let titlesRead = false;
    buildTitleIndex(published, onThread, () => {
      titlesRead = true;
    });
    expect(titlesRead).toBe(true);
    const inWorker = join(dir, 'in-worker-titles');
    const pending = startTitleIndex(published, inWorker);
    await pending.titlesRead;
    await pending.built;
    const a = new Database(onThread, { readonly: true });
    const b = new Database(inWorker, { readonly: true });
    try {
      for (const table of [...INDEX_TABLES, ...BY_LENGTH_TABLES])
        expect(tableRows(b, table)).toEqual(tableRows(a, table));
    } finally {
      a.close();
      b.close();
    }
  });

  it('holds the titles by length: each title by its token count, and those holding a term twice with their markers', () => {
    const db = new Database(published, { readonly: true });
    try {
      // The same terms in the same titles as papers_fts.
      db.exec(`CREATE VIRTUAL TABLE temp.fts_terms USING fts5vocab(main, papers_fts, row);
        CREATE VIRTUAL TABLE temp.by_length_terms USING fts5vocab(main, papers_by_length, row);
        CREATE VIRTUAL TABLE temp.fts_instances USING fts5vocab(main, papers_fts, instance)`);
      const terms = (table: string) =>
        db.prepare(`SELECT term, doc FROM temp.${table} ORDER BY term`).raw().all() as [string, number][];
      expect(terms('by_length_terms')).toEqual(terms('fts_terms'));
      expect(terms('fts_terms').length).toBeGreaterThan(10_000);
      // A title's row id: its token count as papers_fts holds it, then its ordinal.
      const tokens = new Map(
        (db.prepare('SELECT id, sz FROM papers_fts_docsize').raw().all() as [number, Buffer][]).map(
          ([id, sz]) => [id, varint(sz)],
        ),
      );
      const rowidOf = (o: number) => tokens.get(o)! * BY_LENGTH_SHIFT + o;
      for (const word of ['oxide', 'catalysis', 'water', 'fe', 'soil']) {
        const ordinals = db
          .prepare('SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?')
          .pluck()
          .all(`"${word}"`) as number[];
        const byLength = db
          .prepare('SELECT rowid FROM papers_by_length WHERE papers_by_length MATCH ?')
          .pluck()
          .all(`"${word}"`) as number[];
        expect(byLength, word).toEqual(ordinals.map(rowidOf).sort((a, b) => a - b));
      }
      // The titles holding a term more than once (glue words aside), each term's markers.
      const leftOut = new Set(REPEATS_LEFT_OUT);
      const markers = new Map<number, string[]>();
      const held = db
        .prepare('SELECT term, doc, count(*) FROM temp.fts_instances GROUP BY term, doc HAVING count(*) > 1')
        .raw()
        .all() as [string, number, number][];
      for (const [term, doc, n] of held)
        if (!leftOut.has(term))
          markers.set(doc, [...(markers.get(doc) ?? []), repeatMarker(term), repeatMarker(term, n)]);
      expect(markers.size).toBeGreaterThan(1_000);
      // papers_repeats' rows and the markers in their `repeated` column, as its vocabulary holds them.
      db.exec('CREATE VIRTUAL TABLE temp.repeats_instances USING fts5vocab(main, papers_repeats, instance)');
      const marked = new Map<number, string[]>();
      const instances = db
        .prepare("SELECT doc, term FROM temp.repeats_instances WHERE col = 'repeated' ORDER BY doc, term")
        .raw()
        .all() as [number, string][];
      for (const [rowid, term] of instances) marked.set(rowid, [...(marked.get(rowid) ?? []), term]);
      expect(marked).toEqual(
        new Map(
          [...markers]
            .sort(([a], [b]) => rowidOf(a) - rowidOf(b))
            .map(([doc, marks]) => [rowidOf(doc), marks.sort()]),
        ),
      );
      // Its titles hold the same terms as papers_fts (one row a title and column: detail=column).
      const titleTerms = db
        .prepare("SELECT count(*) FROM temp.repeats_instances WHERE col = 'title' AND term = 'oxid'")
        .pluck()
        .get() as number;
      expect(titleTerms).toBe(
        db
          .prepare(
            `SELECT count(DISTINCT doc) FROM temp.fts_instances WHERE term = 'oxid' AND doc IN (${[...markers.keys()].join(',')})`,
          )
          .pluck()
          .get(),
      );
    } finally {
      db.close();
    }
  });

  it('fails the wait for the titles when the snapshot cannot be read, and leaves no side file behind a build', async () => {
    const pending = startTitleIndex(join(dir, 'missing.sqlite'), join(dir, 'missing-titles'));
    await expect(pending.built).rejects.toThrow();
    await expect(pending.titlesRead).rejects.toThrow();
    const snapshots = join(published, '..');
    expect(readdirSync(snapshots).filter((f) => f.endsWith('-titles'))).toEqual([]);
    expect(existsSync(`${published}-titles`)).toBe(false);
  });
});

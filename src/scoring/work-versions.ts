import type { CorpusStore } from '../ingest/corpus-store.js';
import {
  editionKeySql,
  hiddenVersions,
  isPreprintSql,
  titleKeysSql,
  type WorkVersion,
} from '../ingest/paper-record.js';

const doi = (v: unknown) => (typeof v === 'string' ? v : null);

/** Works the rule decides at a time (whole keys: a batch ends at the first key past this). */
const VERSION_BATCH = 50_000;

/**
 * Versions of one work (a preprint and its article, a journal's two language editions) count and
 * show once: the corpus is the stored works less the other versions (ingest/paper-record.ts says
 * which). Leaves two temporary tables in the store: `hidden_versions` (id), the works left out,
 * and `version_keys` (id, k), each work of a title some other work shares and its title's key
 * hash. (The incremental load finds the partners of a changed work by the store's title_keys
 * and the keys the change log kept: scoring/corpus.ts.)
 *
 * The title keys are made by ingest, once per record (store table title_keys); the build groups
 * them, reads only the works of a shared key, and the pure rule decides among them.
 */
export async function findHiddenVersions(store: CorpusStore, batchSize = VERSION_BATCH): Promise<number> {
  // Ingest keeps a key per work (corpus-store.ts), in the merge's transaction: as many keys as
  // works, or a store written before it made them, whose works without a key get one here.
  const [works, keys] = (
    await store.columns('SELECT (SELECT count(*) FROM works), (SELECT count(*) FROM title_keys)')
  ).map((c) => Number(c[0]));
  if (works !== keys) {
    await store.con.run(`CREATE OR REPLACE TEMP TABLE keyless AS
      SELECT w.id, w.updated_date, w.title FROM works w
      ANTI JOIN title_keys t ON t.id = w.id AND t.updated_date = w.updated_date`);
    await store.con.run(
      'DELETE FROM title_keys WHERE id NOT IN (SELECT id FROM works) OR id IN (SELECT id FROM keyless)',
    );
    await store.con.run(`INSERT INTO title_keys ${titleKeysSql('keyless s')}`);
    await store.con.run('DROP TABLE keyless');
  }
  await store.con.run(`CREATE OR REPLACE TEMP TABLE version_keys AS
    SELECT id, k FROM title_keys WHERE k IS NOT NULL QUALIFY count(*) OVER (PARTITION BY k) > 1`);
  // Only the groups the rule can hide a version of: with a preprint, or two DOIs of one edition key.
  // Told from the narrow columns first, grouped (no window sorts the titles along), then the rule's
  // columns read for those groups' works alone: 0.3 s less of the load at 1M works.
  const hidden: number[] = [];
  // Streamed in key order and decided a few thousand keys at a time (hiddenVersions groups by the
  // title itself, within a key), never all at once: at 10M works the groups hold about a million
  // works, whose texts held in JS took over a GB beside DuckDB's share of the budget.
  let batch: WorkVersion[] = [];
  let lastKey: unknown;
  await store.forEachChunk(
    `WITH marks AS (
        SELECT v.k, ${isPreprintSql('w.doi', 'w.venue', 'w.type')} AS preprint, ${editionKeySql('w.doi')} AS edition
        FROM works w JOIN version_keys v USING (id)),
      groups AS (
        SELECT k FROM (SELECT k, edition, count(*) AS n, bool_or(preprint) AS preprints FROM marks GROUP BY k, edition)
        GROUP BY k HAVING bool_or(preprints) OR bool_or(edition IS NOT NULL AND n > 1))
      SELECT v.k, w.id::DOUBLE AS id, w.title, w.doi, w.venue, w.type, w.year, w.cited_by_count AS citations
      FROM works w JOIN (SELECT id, k FROM version_keys SEMI JOIN groups USING (k)) v USING (id)
      ORDER BY v.k, w.id`,
    (chunk) => {
      const [k, ids, titles, dois, venues, types, years, citations] = Array.from({ length: 8 }, (_, c) =>
        chunk.getColumnVector(c),
      );
      for (let i = 0; i < chunk.rowCount; i++) {
        const key = k!.getItem(i);
        // A key's works are never split between two batches.
        if (key !== lastKey && batch.length >= batchSize) {
          for (const id of hiddenVersions(batch)) hidden.push(id);
          batch = [];
        }
        lastKey = key;
        batch.push({
          id: ids!.getItem(i) as number,
          title: titles!.getItem(i) as string,
          doi: doi(dois!.getItem(i)),
          venue: (venues!.getItem(i) as string | null) ?? null,
          type: (types!.getItem(i) as string | null) ?? null,
          year: (years!.getItem(i) as number | null) ?? null,
          citations: (citations!.getItem(i) as number | null) ?? null,
        });
      }
    },
  );
  for (const id of hiddenVersions(batch)) hidden.push(id);
  hidden.sort((a, b) => a - b);
  await store.idTable('hidden_versions', hidden);
  return hidden.length;
}

/** The stored works that are in the corpus (not another version of one), as a FROM item. */
export const SHOWN_WORKS = '(SELECT * FROM works ANTI JOIN hidden_versions USING (id))';

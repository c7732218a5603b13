import type { CorpusStore } from '../ingest/corpus-store.js';
import {
  hiddenVersions,
  VERSION_KEY_MIN_LENGTH,
  versionKeySql,
  type WorkVersion,
} from '../ingest/paper-record.js';

/**
 * Versions of one work (a preprint and its article, a journal's two language editions) count and
 * show once: the corpus is the stored works less the other versions (ingest/paper-record.ts says
 * which). Leaves two temporary tables in the store: `hidden_versions` (id), the works left out,
 * and `version_keys` (id, k), each work of a title some other work shares and its title's key
 * hash, so the incremental load re-reads a work whose version partner changed.
 *
 * One pass over the titles in DuckDB finds the shared titles (about 0.9 s at 1M works on two
 * threads); only those works are read here, and the pure rule decides among them.
 */
export async function findHiddenVersions(store: CorpusStore): Promise<number> {
  await store.con.run(`CREATE OR REPLACE TEMP TABLE version_keys AS
    WITH k AS (SELECT id, ${versionKeySql('title')} AS key FROM works WHERE title IS NOT NULL)
    SELECT id, hash(key) AS k FROM k
    WHERE length(key) >= ${VERSION_KEY_MIN_LENGTH} QUALIFY count(*) OVER (PARTITION BY hash(key)) > 1`);
  const rows = await store.rows<{
    id: number;
    title: string;
    doi: string | null;
    venue: string | null;
    type: string | null;
    year: number | null;
    citations: number | null;
    k: bigint;
  }>(`SELECT w.id::DOUBLE AS id, w.title, w.doi, w.venue, w.type, w.year, w.cited_by_count AS citations, v.k
    FROM works w JOIN version_keys v USING (id) ORDER BY v.k, w.id`);
  const hidden: number[] = [];
  // Works sharing a key hash go to the rule together (it tells a hash collision apart itself).
  for (let a = 0; a < rows.length; ) {
    let b = a + 1;
    while (b < rows.length && rows[b]!.k === rows[a]!.k) b++;
    const group: WorkVersion[] = rows.slice(a, b);
    hidden.push(...hiddenVersions(group));
    a = b;
  }
  await store.con.run('CREATE OR REPLACE TEMP TABLE hidden_versions (id BIGINT)');
  if (hidden.length > 0) {
    const appender = await store.con.createAppender('hidden_versions');
    for (const id of hidden.sort((x, y) => x - y)) {
      appender.appendBigInt(BigInt(id));
      appender.endRow();
    }
    appender.closeSync();
  }
  return hidden.length;
}

/** The stored works that are in the corpus (not another version of one), as a FROM item. */
export const SHOWN_WORKS = '(SELECT * FROM works ANTI JOIN hidden_versions USING (id))';

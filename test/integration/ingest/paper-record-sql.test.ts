import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CorpusStore, openCorpusStore } from '../../../src/ingest/corpus-store.js';
import {
  editionKey,
  editionKeySql,
  isPreprint,
  isPreprintSql,
  versionKey,
  versionKeySql,
} from '../../../src/ingest/paper-record.js';

/**
 * The SQL forms of the version rules (the store keys titles and the build picks groups in DuckDB)
 * say what the pure functions say, on every record of the bundled sample.
 */
const FIXTURES = join(import.meta.dirname, '../../../fixtures/openalex');
let store: CorpusStore;

beforeAll(async () => {
  store = await openCorpusStore(':memory:');
  const records = ['works-chemistry.jsonl.gz', 'works-geoscience.jsonl.gz'].flatMap((f) =>
    gunzipSync(readFileSync(join(FIXTURES, f)))
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Record<string, unknown>),
  );
  await store.con.run('CREATE TABLE r (i INTEGER, title VARCHAR, doi VARCHAR, venue VARCHAR, type VARCHAR)');
  const appender = await store.con.createAppender('r');
  records.forEach((r, i) => {
    const location = r.primary_location as { source?: { display_name?: string } } | null;
    const values = [
      (r.display_name ?? r.title) as string | null,
      typeof r.doi === 'string' ? r.doi.replace('https://doi.org/', '').toLowerCase() : null,
      location?.source?.display_name ?? null,
      (r.type as string | undefined) ?? null,
    ];
    appender.appendInteger(i);
    for (const v of values) {
      if (v === null) appender.appendNull();
      else appender.appendVarchar(v);
    }
    appender.endRow();
  });
  appender.closeSync();
}, 60_000);

afterAll(() => store?.close());

describe('the SQL forms of the version rules', () => {
  it('key, tell preprints and read editions as the pure functions do, on every sample record', async () => {
    const rows = await store.rows<{
      title: string | null;
      doi: string | null;
      venue: string | null;
      type: string | null;
      key: string | null;
      preprint: boolean;
      edition: string | null;
    }>(`SELECT title, doi, venue, type, ${versionKeySql('title')} AS key,
        coalesce(${isPreprintSql('doi', 'venue', 'type')}, false) AS preprint, ${editionKeySql('doi')} AS edition
      FROM r ORDER BY i`);
    expect(rows.length).toBeGreaterThan(21_000);
    let preprints = 0;
    for (const r of rows) {
      if (r.title !== null) expect(r.key, r.title).toBe(versionKey(r.title));
      expect(r.preprint, `${r.doi} ${r.venue} ${r.type}`).toBe(isPreprint(r));
      expect(r.edition, String(r.doi)).toBe(editionKey(r.doi));
      if (r.preprint) preprints++;
    }
    expect(preprints).toBeGreaterThan(1000);
  });
});

import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BUNDLED_SAMPLE } from '../../../src/config/paths.js';
import { type CorpusStore, openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { readTaxonomy } from '../../../src/ingest/taxonomy.js';
import { tempDir } from '../../helpers/works.js';

/**
 * Every ingest loads the taxonomy again (`ri update` too): a store that holds these very topics is
 * not written (no transaction, so nothing to checkpoint when it closes); a changed taxonomy is.
 */
afterEach(() => {
  vi.restoreAllMocks();
});

const topicRows = async (store: CorpusStore) =>
  store.rows<{ id: number; name: string; keywords: string }>(
    'SELECT id, name, keywords FROM topics ORDER BY id, name',
  );

describe('loading the taxonomy', () => {
  it('writes the topics once, and again only when they change', async () => {
    const store = await openCorpusStore(join(tempDir('ri-taxonomy-'), 'corpus.duckdb'));
    try {
      const topics = readTaxonomy(BUNDLED_SAMPLE.topics);
      expect(topics.length).toBeGreaterThan(1000);
      const run = vi.spyOn(store.con, 'run');
      const transactions = () => run.mock.calls.filter(([sql]) => sql === 'BEGIN TRANSACTION').length;

      expect(await store.loadTaxonomy(topics)).toBe(topics.length);
      expect(transactions()).toBe(1);
      const first = await topicRows(store);
      expect(first).toHaveLength(topics.length);

      // The same topics (read again from the file): nothing written, the same rows.
      expect(await store.loadTaxonomy(readTaxonomy(BUNDLED_SAMPLE.topics))).toBe(topics.length);
      expect(transactions()).toBe(1);
      expect(await topicRows(store)).toEqual(first);

      // One name changed: written, and that row is the new one.
      const renamed = topics.map((t, i) => (i === 7 ? { ...t, name: `${t.name} (renamed)` } : t));
      await store.loadTaxonomy(renamed);
      expect(transactions()).toBe(2);
      const after = await topicRows(store);
      expect(after.find((r) => r.id === topics[7]!.id)?.name).toBe(`${topics[7]!.name} (renamed)`);
      expect(after).toHaveLength(topics.length);

      // Back to the first: written again, as it was.
      await store.loadTaxonomy(topics);
      expect(transactions()).toBe(3);
      expect(await topicRows(store)).toEqual(first);
    } finally {
      store.close();
    }
  });
});

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { tagWorks } from '../../../src/tagging/tag-works.js';
import { TAGGER_VERSION } from '../../../src/tagging/tagger.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';

/**
 * The tag step: it tags only the titles not tagged yet, reading which they are has no side
 * effect, and a new tagger version (useTagger) drops every tag and starts the change log over,
 * so that every title is tagged again and no build cache is taken as current.
 */
describe('the tag step', () => {
  it('tags new titles once, and all of them again under a new tagger version', async () => {
    const dir = tempDir('ri-tag-works-');
    const corpus = join(dir, 'corpus.duckdb');
    const works = writeWorks(join(dir, 'works.jsonl'), [
      work(1, { title: 'Iron oxide catalysts' }),
      work(2, { title: 'Copper and zinc alloys' }),
      work(3, { title: 'A title with no element' }),
    ]);
    await ingest(corpus, expandWorksPaths([works]));
    const store = await openCorpusStore(corpus);
    try {
      expect(await tagWorks(store)).toBe(3);
      expect(await tagWorks(store)).toBe(0);
      const before = await store.state();

      // Reading what is untagged changes nothing, whatever tagger is asked about later.
      expect(await store.countUntagged()).toBe(0);
      expect(await store.state()).toEqual(before);

      // The same version again: nothing dropped.
      await store.useTagger(TAGGER_VERSION);
      expect(await store.state()).toEqual(before);
      expect(await store.countUntagged()).toBe(0);

      // A new version: every title is untagged, and the change log starts after a new generation.
      await store.useTagger(TAGGER_VERSION + 1);
      const after = await store.state();
      expect(after.generation).toBe(before.generation + 1);
      expect(after.loggedAfter).toBe(after.generation);
      const untagged: number[] = [];
      await store.forEachUntagged(2, async (ids) => {
        untagged.push(...ids);
      });
      expect(untagged.sort()).toEqual([1, 2, 3]);
      // In batches of two (at 10M works, of 2^18): the same tags as in one.
      expect(await tagWorks(store, 2)).toBe(3);
      expect(await store.countUntagged()).toBe(0);
      const tags = await store.rows<{ id: bigint; symbols: string }>(
        'SELECT id, symbols FROM tags ORDER BY id',
      );
      expect(tags.map((t) => [Number(t.id), t.symbols])).toEqual([
        [1, 'O,Fe'],
        [2, 'Cu,Zn'],
        [3, ''],
      ]);
    } finally {
      store.close();
    }
  });
});

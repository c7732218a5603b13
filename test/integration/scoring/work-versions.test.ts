import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { findHiddenVersions } from '../../../src/scoring/work-versions.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';

/**
 * Twelve titles, each with an article and an arXiv preprint of it (the preprint is hidden), a
 * second preprint on the even ones, and a title alone: the works the rule hides are the same
 * whether the keys are decided all at once or one at a time.
 */
function records(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let t = 0; t < 12; t++) {
    const title = `Operando spectroscopy of catalyst number ${t} under strain`;
    out.push(work(1000 + t, { title }));
    out.push(
      work(2000 + t, { title, doi: `https://doi.org/10.48550/arxiv.2401.${1000 + t}`, type: 'preprint' }),
    );
    if (t % 2 === 0) out.push(work(3000 + t, { title, type: 'preprint', doi: null }));
  }
  out.push(work(4000, { title: 'A title no other work has, long enough to be keyed' }));
  return out;
}

describe('findHiddenVersions', () => {
  it('hides the same works when the keys are decided one at a time as all at once', async () => {
    const dir = tempDir('ri-work-versions-');
    const path = join(dir, 'corpus.duckdb');
    await ingest(path, expandWorksPaths([writeWorks(join(dir, 'w.jsonl'), records())]));
    const store = await openCorpusStore(path);
    try {
      const hiddenWith = async (batch?: number) => {
        const count = await findHiddenVersions(store, batch);
        const ids = (
          await store.rows<{ id: number }>('SELECT id::DOUBLE AS id FROM hidden_versions ORDER BY id')
        ).map((r) => r.id);
        expect(ids).toHaveLength(count);
        return ids;
      };
      const whole = await hiddenWith();
      // Every preprint, none of the articles.
      expect(whole).toEqual([
        ...Array.from({ length: 12 }, (_, t) => 2000 + t),
        ...Array.from({ length: 6 }, (_, t) => 3000 + 2 * t),
      ]);
      expect(await hiddenWith(1)).toEqual(whole);
      expect(await hiddenWith(5)).toEqual(whole);
    } finally {
      store.close();
    }
  });
});

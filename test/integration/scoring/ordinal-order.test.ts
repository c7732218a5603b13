import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { loadCorpusReporting } from '../../../src/scoring/corpus.js';
import { DEFAULT_PARAMETERS } from '../../../src/scoring/parameters.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';

/**
 * Papers are numbered in (date, work id) order: the exact date, else the middle of the year,
 * papers with neither first; so a paper list in ordinal order is in date order.
 */
describe('the ordinal order', () => {
  it('is date then work id, a year alone counting as its 1 July, undated papers first', async () => {
    const records = [
      work(5, { publication_date: '2024-07-02', publication_year: 2024 }),
      work(4, { publication_date: null, publication_year: 2024 }), // 2024-07-01
      work(9, { publication_date: '2024-07-01', publication_year: 2024 }), // the same day: by id
      work(3, { publication_date: '2024-06-30', publication_year: 2024 }),
      work(8, { publication_date: null, publication_year: null }), // neither: first
      work(7, { publication_date: '1999-12-31', publication_year: 1999 }),
      work(6, { publication_date: null, publication_year: 987 }), // a year of three digits, by number
      work(2, { publication_date: '2031-01-01', publication_year: 2031 }),
    ];
    const dir = tempDir('ri-ordinal-order-');
    const corpusPath = join(dir, 'corpus.duckdb');
    await ingest(corpusPath, expandWorksPaths([writeWorks(join(dir, 'w.jsonl'), records)]));
    const store = await openCorpusStore(corpusPath);
    try {
      const { corpus } = await loadCorpusReporting(store, DEFAULT_PARAMETERS, null);
      expect(Array.from(corpus.workId)).toEqual([8, 6, 7, 3, 4, 9, 5, 2]);
      // Ordinal order is age-date order (the date, or mid-year), never decreasing.
      const dated = Array.from(corpus.ageDay).slice(1);
      expect(dated).toEqual([...dated].sort((a, b) => a - b));
    } finally {
      store.close();
    }
  });
});

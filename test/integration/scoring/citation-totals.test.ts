import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { type CitationTotals, loadCorpusReporting } from '../../../src/scoring/corpus.js';
import { DEFAULT_PARAMETERS } from '../../../src/scoring/parameters.js';
import { tempDir, topic, work, writeWorks } from '../../helpers/works.js';

type Count = { year: number; cited_by_count: number };

/**
 * The citation totals the field curves are estimated from, against the rule computed here from
 * the records: eligible works (counts_by_year known, published in or after its first year on
 * record, and horizon years before the cut-off year), their citations by age 0..horizon summed
 * per field; a field counts only when one of its works is cited in it; the whole corpus's totals
 * sum every field's, and count only when some work is cited.
 */
function expected(records: Record<string, unknown>[], horizon: number, cutoffYear: number) {
  const counts = (r: Record<string, unknown>) => r.counts_by_year as Count[] | undefined;
  const first = Math.min(...records.flatMap((r) => (counts(r) ?? []).map((c) => c.year)));
  const fieldOf = (r: Record<string, unknown>) => {
    const t = r.primary_topic as { field: { id: string } } | null;
    return t ? Number(t.field.id.split('/').pop()) : -1;
  };
  const byAge = new Map<number, number[]>();
  const cited = new Map<number, Set<unknown>>();
  for (const r of records) {
    const year = r.publication_year as number;
    if (!counts(r) || year < first || year + horizon > cutoffYear) continue;
    for (const c of counts(r)!) {
      const age = c.year - year;
      if (age < 0 || age > horizon) continue;
      const f = fieldOf(r);
      if (!byAge.has(f)) byAge.set(f, new Array(horizon + 1).fill(0));
      byAge.get(f)![age]! += c.cited_by_count;
      if (c.cited_by_count > 0) cited.set(f, (cited.get(f) ?? new Set()).add(r.id));
    }
  }
  const byField = new Map<number, CitationTotals>();
  const all: CitationTotals = { byAge: new Array(horizon + 1).fill(0), citedPapers: 0 };
  for (const f of [...byAge.keys()].sort((a, b) => a - b)) {
    all.byAge.forEach((_, age) => {
      all.byAge[age]! += byAge.get(f)![age]!;
    });
    if (!cited.has(f)) continue;
    byField.set(f, { byAge: byAge.get(f)!, citedPapers: cited.get(f)!.size });
    all.citedPapers += cited.get(f)!.size;
  }
  if (all.citedPapers === 0) all.byAge.fill(0);
  return { byField, all };
}

async function load(records: Record<string, unknown>[]) {
  const dir = tempDir('ri-citation-totals-');
  const corpusPath = join(dir, 'corpus.duckdb');
  await ingest(corpusPath, expandWorksPaths([writeWorks(join(dir, 'w.jsonl'), records)]));
  const store = await openCorpusStore(corpusPath);
  try {
    return (await loadCorpusReporting(store, DEFAULT_PARAMETERS, null)).corpus.citationTotals;
  } finally {
    store.close();
  }
}

const inField = (fieldId: number) => {
  const t = topic(200 + fieldId, `Topic in field ${fieldId}`, 0.9, fieldId);
  return { primary_topic: t, topics: [t] };
};
const published = (year: number, counts: [number, number][], field: object) => ({
  publication_year: year,
  publication_date: `${year}-03-01`,
  cited_by_count: counts.reduce((s, [, n]) => s + n, 0),
  counts_by_year: counts.map(([y, n]) => ({ year: y, cited_by_count: n })),
  ...field,
});

describe('citation totals for the field curves', () => {
  const horizon = DEFAULT_PARAMETERS.citationHorizonYears;
  // Cut-off 2024-06-01: works of 2016 and before are old enough for a horizon of 8 years.
  const latest = work(100, { publication_year: 2024, publication_date: '2024-06-01' });

  it('sums each cited field, leaves out an uncited one, and sums every field for the corpus', async () => {
    const records = [
      latest,
      work(
        1,
        published(
          2014,
          [
            [2014, 1],
            [2015, 4],
            [2016, 2],
            [2030, 9],
          ],
          inField(16),
        ),
      ),
      work(
        2,
        published(
          2015,
          [
            [2016, 3],
            [2022, 5],
            [2024, 1],
          ],
          inField(16),
        ),
      ),
      work(
        3,
        published(
          2015,
          [
            [2015, 0],
            [2017, 0],
          ],
          inField(22),
        ),
      ), // field 22: never cited
      work(
        4,
        published(
          2016,
          [
            [2016, 6],
            [2018, 2],
          ],
          { primary_topic: null, topics: [] },
        ),
      ), // no field
      work(5, published(2012, [[2013, 7]], inField(16))), // before the first year on record (2013)
      work(6, published(2019, [[2019, 5]], inField(22))), // too young for the horizon
      work(7, { publication_year: 2014, publication_date: '2014-05-01', counts_by_year: undefined }),
    ];
    const totals = await load(records);
    const want = expected(records, horizon, 2024);
    expect([...totals.byField.keys()]).toEqual([-1, 16]);
    expect(totals).toEqual(want);
    // The rule's own figures, so the oracle above cannot agree with a wrong total by accident.
    expect(totals.byField.get(16)!.byAge.slice(0, 3)).toEqual([1 + 0, 4 + 3, 2 + 0]);
    expect(totals.all.citedPapers).toBe(3);
  }, 60_000);

  it('counts nothing for the corpus when no eligible work is cited', async () => {
    const records = [
      latest,
      work(
        1,
        published(
          2014,
          [
            [2014, 0],
            [2015, 0],
          ],
          inField(16),
        ),
      ),
      work(2, published(2015, [[2016, 0]], inField(22))),
    ];
    const totals = await load(records);
    expect(totals).toEqual(expected(records, horizon, 2024));
    expect(totals.byField.size).toBe(0);
    expect(totals.all).toEqual({ byAge: new Array(horizon + 1).fill(0), citedPapers: 0 });
  }, 60_000);
});

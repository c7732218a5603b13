import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { buildSnapshot } from '../../../src/snapshot-build/build-snapshot.js';
import { tempDir, topic, work, writeWorks } from '../../helpers/works.js';

/** Two files that spell a keyword and a topic (one the taxonomy lacks) in different case. */
function twoFiles(dir: string): [string, string] {
  const spelled = (id: number, keyword: string, topicName: string) =>
    work(id, {
      title: `Iron oxide catalysts ${id}`,
      keywords: [{ id: 'https://openalex.org/keywords/iron-oxide', display_name: keyword, score: 0.8 }],
      primary_topic: topic(20001, topicName, 0.9),
      topics: [topic(20001, topicName, 0.9)],
    });
  const a = writeWorks(
    join(dir, 'a.jsonl'),
    [1, 2, 3].map((i) => spelled(i, 'iron oxide', 'iron catalysis')),
  );
  const b = writeWorks(
    join(dir, 'b.jsonl'),
    [4, 5].map((i) => spelled(i, 'Iron Oxide', 'Iron catalysis')),
  );
  return [a, b];
}

async function versionOf(batches: string[][]): Promise<string> {
  const dir = tempDir('ri-order-');
  const corpus = join(dir, 'corpus.duckdb');
  (await openCorpusStore(corpus)).close();
  for (const files of batches) await ingest(corpus, expandWorksPaths(files));
  return (await buildSnapshot(corpus, join(dir, 'snapshots'))).version;
}

describe('the order works arrive in', () => {
  it('files ingested one at a time, in either order (as --watch does), give the data_version of one run', async () => {
    const [a, b] = twoFiles(tempDir('ri-order-files-'));
    const together = await versionOf([[a, b]]);
    expect(await versionOf([[a], [b]])).toBe(together);
    expect(await versionOf([[b], [a]])).toBe(together);
  }, 120_000);
});

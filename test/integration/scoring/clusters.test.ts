import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CorpusStore, openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { assignClusters, citationVotes } from '../../../src/scoring/clusters.js';
import { type Corpus, loadCorpusReporting, REF_PAIRS_SQL } from '../../../src/scoring/corpus.js';
import { DEFAULT_PARAMETERS } from '../../../src/scoring/parameters.js';
import { tempDir, topic, work, writeWorks } from '../../helpers/works.js';

/**
 * Papers without a primary topic join the topic most common among the papers they cite and that
 * cite them (ties: the smaller id), the votes counted by DuckDB: the same as the rule in
 * JavaScript over the references in memory, as the build applied it before.
 *   W10 cites W1 (T102) and W2 (T101): a tie, T101.
 *   W11 cites W3 (T101) and W4 (T102), is cited by W4 and W5 (T103): T102 (2 votes).
 *   W12 cites W10 (no topic), itself and W999 (not in the corpus), is cited by W13: no votes, -1.
 *   W13 cites W12 and W5: T103.
 *   W14 cites W3 and W2 (T101 twice), is cited by W4 and W1 (T102 twice) and W5 (T103): T101.
 */
const [T101, T102, T103] = [topic(101, 'One', 0.9), topic(102, 'Two', 0.9), topic(103, 'Three', 0.9)];
const cites = (...ids: number[]) => ids.map((id) => `https://openalex.org/W${id}`);
const noTopic = { primary_topic: null, topics: [] };
const CORPUS = [
  work(1, { primary_topic: T102, topics: [T102], referenced_works: cites(14) }),
  work(2, { primary_topic: T101, topics: [T101], publication_date: '2024-01-02' }),
  work(3, { primary_topic: T101, topics: [T101], referenced_works: cites(2) }),
  work(4, { primary_topic: T102, topics: [T102], referenced_works: cites(11, 14) }),
  work(5, { primary_topic: T103, topics: [T103], referenced_works: cites(11, 14) }),
  work(10, { ...noTopic, referenced_works: cites(1, 2) }),
  work(11, { ...noTopic, referenced_works: cites(3, 4) }),
  work(12, { ...noTopic, referenced_works: cites(10, 12, 999) }),
  work(13, { ...noTopic, referenced_works: cites(12, 5) }),
  work(14, { ...noTopic, referenced_works: cites(3, 2) }),
];

/** The rule as it ran over the references in memory (a CSR, each paper's cited ordinals). */
function clustersInMemory(primaryTopic: Int32Array, from: Int32Array, to: Int32Array): Int32Array {
  const topic = Int32Array.from(primaryTopic);
  const votes = new Map<number, Map<number, number>>();
  const vote = (p: number, t: number) => {
    if (primaryTopic[p] !== -1 || t === -1) return;
    const m = votes.get(p) ?? new Map<number, number>();
    votes.set(p, m.set(t, (m.get(t) ?? 0) + 1));
  };
  for (let i = 0; i < from.length; i++) {
    vote(from[i]!, primaryTopic[to[i]!]!);
    vote(to[i]!, primaryTopic[from[i]!]!);
  }
  for (const [p, m] of votes) {
    let [best, bestVotes] = [-1, 0];
    for (const [t, v] of m) if (v > bestVotes || (v === bestVotes && t < best)) [best, bestVotes] = [t, v];
    topic[p] = best;
  }
  return topic;
}

let store: CorpusStore;
let corpus: Corpus;
beforeAll(async () => {
  const dir = tempDir('ri-clusters-');
  const corpusPath = join(dir, 'corpus.duckdb');
  await ingest(corpusPath, expandWorksPaths([writeWorks(join(dir, 'w.jsonl'), CORPUS)]));
  store = await openCorpusStore(corpusPath);
  corpus = (await loadCorpusReporting(store, DEFAULT_PARAMETERS, null)).corpus;
});
afterAll(() => store?.close());

describe('clusters from the citation graph', () => {
  it('give each paper without a topic the most voted one, ties to the smaller id, none without votes', async () => {
    const clusters = assignClusters(corpus.primaryTopic, await citationVotes(store));
    const byWork = new Map([...corpus.workId].map((id, p) => [id, p]));
    const of = (id: number) => [clusters.topic[byWork.get(id)!], clusters.fromCitations[byWork.get(id)!]];
    expect([1, 2, 3, 4, 5].map(of)).toEqual([
      [102, 0],
      [101, 0],
      [101, 0],
      [102, 0],
      [103, 0],
    ]);
    expect([10, 11, 12, 13, 14].map(of)).toEqual([
      [101, 1],
      [102, 1],
      [-1, 0],
      [103, 1],
      [101, 1],
    ]);
  });

  it('are those the rule gave over the references in memory', async () => {
    const [from, to] = await store.intColumns(REF_PAIRS_SQL, 2);
    expect(from!.length).toBe(15); // W12's self-citation and W999 are not references
    const clusters = assignClusters(corpus.primaryTopic, await citationVotes(store));
    expect([...clusters.topic]).toEqual([...clustersInMemory(corpus.primaryTopic, from!, to!)]);
  });

  it('refuse votes for a paper the corpus gives a topic (the store changed meanwhile)', () => {
    const p = corpus.primaryTopic.findIndex((t) => t !== -1);
    expect(() =>
      assignClusters(corpus.primaryTopic, [Int32Array.of(p), Int32Array.of(101), Int32Array.of(1)]),
    ).toThrow('the corpus store changed');
  });
});

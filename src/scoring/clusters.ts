import type { CorpusStore } from '../ingest/corpus-store.js';

export interface Clusters {
  /** OpenAlex topic id of each paper's community, -1 when none can be told. */
  topic: Int32Array;
  /** 1 where the community came from the citation graph rather than the paper's own topic. */
  fromCitations: Uint8Array;
}

/**
 * The votes of the citation graph for the papers without a primary topic: (paper, topic, votes)
 * rows, one per topic among the papers it cites and that cite it (a reference counts as often
 * as the record lists it, as in REF_PAIRS_SQL, corpus.ts). Counted by DuckDB over the load's
 * table `ord`, whose fact_topic (NULL: none) is the corpus's primaryTopic (-1: none), so the
 * references are never all in memory. A paper without a topic has no self-citation to count.
 */
const VOTES_SQL = `SELECT p, t::INTEGER, count(*)::INTEGER FROM (
    SELECT m.o AS p, b.fact_topic AS t
      FROM (SELECT id, unnest(refs) AS ref FROM works WHERE id IN (SELECT id FROM ord WHERE fact_topic IS NULL)) u
      JOIN ord m ON m.id = u.id JOIN ord b ON b.id = u.ref WHERE b.fact_topic IS NOT NULL
    UNION ALL
    SELECT m.o, a.fact_topic
      FROM (SELECT id, unnest(refs) AS ref FROM works) u
      JOIN ord m ON m.id = u.ref AND m.fact_topic IS NULL JOIN ord a ON a.id = u.id WHERE a.fact_topic IS NOT NULL
  ) GROUP BY p, t`;

/** The citation votes (VOTES_SQL) as columns: paper ordinal, topic id, votes. */
export function citationVotes(store: CorpusStore): Promise<Int32Array[]> {
  return store.intColumns(VOTES_SQL, 3);
}

/**
 * A paper's cluster is its primary topic. A paper without one joins the community most common
 * among the papers it cites and that cite it (one step of label propagation, `votes` from
 * citationVotes); ties go to the smaller topic id so the result is reproducible.
 */
export function assignClusters(primaryTopic: Int32Array, votes: readonly Int32Array[]): Clusters {
  const [paper, voted, count] = votes as [Int32Array, Int32Array, Int32Array];
  const topic = Int32Array.from(primaryTopic);
  const fromCitations = new Uint8Array(primaryTopic.length);
  const bestVotes = new Int32Array(primaryTopic.length);
  for (let i = 0; i < paper.length; i++) {
    const p = paper[i]!;
    // The store and the corpus must agree on who has no topic.
    if (primaryTopic[p] !== -1) throw new Error('the corpus store changed while the build read it');
    const [t, v] = [voted[i]!, count[i]!];
    if (v > bestVotes[p]! || (v === bestVotes[p] && t < topic[p]!)) {
      topic[p] = t;
      bestVotes[p] = v;
      fromCitations[p] = 1;
    }
  }
  return { topic, fromCitations };
}

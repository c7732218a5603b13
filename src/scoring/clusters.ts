import { getOrCreate } from '../util/maps.js';
import type { Corpus } from './corpus.js';

export interface Clusters {
  /** OpenAlex topic id of each paper's community, -1 when none can be told. */
  topic: Int32Array;
  /** 1 where the community came from the citation graph rather than the paper's own topic. */
  fromCitations: Uint8Array;
}

/**
 * A paper's cluster is its primary topic. A paper without one joins the community most common
 * among the papers it cites and that cite it (one step of label propagation); ties go to the
 * smaller topic id so the result is reproducible.
 */
export function assignClusters(corpus: Corpus): Clusters {
  const topic = Int32Array.from(corpus.primaryTopic);
  const fromCitations = new Uint8Array(corpus.n);
  const missing = new Set<number>();
  for (let p = 0; p < corpus.n; p++) if (topic[p] === -1) missing.add(p);
  if (missing.size === 0) return { topic, fromCitations };

  const votes = new Map<number, Map<number, number>>();
  const vote = (p: number, t: number) => {
    if (t === -1) return;
    const m = getOrCreate(votes, p, () => new Map<number, number>());
    m.set(t, (m.get(t) ?? 0) + 1);
  };
  for (let p = 0; p < corpus.n; p++) {
    for (let i = corpus.refs.start[p]!; i < corpus.refs.start[p + 1]!; i++) {
      const q = corpus.refs.values[i]!;
      if (missing.has(p)) vote(p, corpus.primaryTopic[q]!);
      if (missing.has(q)) vote(q, corpus.primaryTopic[p]!);
    }
  }
  for (const [p, m] of votes) {
    let best = -1;
    let bestVotes = 0;
    for (const [t, v] of m) {
      if (v > bestVotes || (v === bestVotes && t < best)) {
        best = t;
        bestVotes = v;
      }
    }
    topic[p] = best;
    fromCitations[p] = 1;
  }
  return { topic, fromCitations };
}

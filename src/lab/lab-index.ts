import { ServiceError } from '../core/errors.js';
import { paperColumn, typedArrayOf } from '../snapshot/paper-columns.js';
import type { LabQueries, SnapshotView } from '../snapshot/reader.js';
import { EMPTY, type Postings } from './sets.js';

/** A subject a lab term can name. */
export interface SubjectRef {
  type: 'element' | 'topic' | 'keyword';
  id: string;
  name: string;
  paperCount: number;
}

/**
 * What the lab reads from one snapshot, loaded once and kept with it (snapshot.memoize):
 * whole-corpus columns by paper ordinal, the topic and keyword names, and postings on demand.
 */
export interface LabIndex {
  papers: number;
  /** Publication year, 0 when unknown. */
  year: Int16Array;
  /** The paper's community (OpenAlex topic number), -1 when none. */
  cluster: Int32Array;
  /** Position in the global ranking order: lower is better (impact, then citations, then DOI). */
  rankPosition: Int32Array;
  /** Recency weight at the cut-off, the RIS term (0 without a date). */
  recency: Float64Array;
  /** Topics and keywords by lower-cased name (a name can be both). */
  byName: Map<string, SubjectRef[]>;
  /** Every topic with the lower-cased words of its name, most papers first: wildcards expand over these. */
  topics: { ref: SubjectRef; words: string[] }[];
  topicName(topicNumber: number): string | null;
  postings(ref: Pick<SubjectRef, 'type' | 'id'>): Postings;
}

export function labIndex(snapshot: SnapshotView<LabQueries>): LabIndex {
  return snapshot.memoize('lab-index', () => loadLabIndex(snapshot));
}

function loadLabIndex(snapshot: SnapshotView<LabQueries>): LabIndex {
  const reader = snapshot.reader;
  if (!reader.hasLabTables()) {
    throw new ServiceError(
      'data_unavailable',
      'This snapshot was built by an older version without the lab index; rebuild it with `ri build`.',
    );
  }
  const year = paperColumn(snapshot, 'year');
  const cluster = paperColumn(snapshot, 'cluster');
  const rankPosition = paperColumn(snapshot, 'rank_position');
  const recency = paperColumn(snapshot, 'recency');

  const byName = new Map<string, SubjectRef[]>();
  const topics: LabIndex['topics'] = [];
  const topicNames = new Map<number, string>();
  for (const r of reader.labSubjects()) {
    const key = r.name.toLowerCase();
    const list = byName.get(key);
    if (list) list.push(r);
    else byName.set(key, [r]);
    if (r.type === 'topic') {
      topics.push({ ref: r, words: key.split(/[^\p{L}\p{N}]+/u) });
      topicNames.set(Number(r.id.slice(1)), r.name);
    }
  }

  // Postings of the subjects asked for most stay decoded; the rest are read again (a fast PK read).
  const cache = new Map<string, Postings>();
  const CACHE_ENTRIES = 512;
  return {
    papers: year.length,
    year,
    cluster,
    rankPosition,
    recency,
    byName,
    topics,
    topicName: (t) => topicNames.get(t) ?? null,
    postings(ref) {
      const key = `${ref.type}|${ref.id}`;
      let list = cache.get(key);
      if (!list) {
        const blob = reader.postings(ref.type, ref.id);
        list = blob ? typedArrayOf(Int32Array, blob) : EMPTY;
        if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
        cache.set(key, list);
      }
      return list;
    },
  };
}

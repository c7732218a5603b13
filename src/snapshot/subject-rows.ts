import { ELEMENTS } from '../elements/elements.js';
import type { Community, ElementCommunity } from '../scoring/communities.js';
import type { Corpus } from '../scoring/corpus.js';
import { type EntityScore, invert, type SubjectType } from '../scoring/score-entities.js';
import { encodeRanked } from './ranked.js';

/**
 * The rows of the subject tables (subjects, subjects_fts, history, routed_elements, postings,
 * communities), made ready to insert: texts encoded, blobs packed. They are made in the scoring
 * worker and cross to the writer's thread as flat columns: tens of thousands of subjects as
 * objects (each with its history and top 100 papers) cost seconds to clone; columns, almost nothing.
 */
export interface SubjectRows {
  count: number;
  type: SubjectType[];
  id: string[];
  name: string[];
  description: (string | null)[];
  paperCount: Int32Array;
  windowPapers: Int32Array;
  ri: Float64Array;
  ris: Float64Array;
  /** NaN where hri is null. */
  hri: Float64Array;
  totalRanked: Int32Array;
  /** Subject i's ranked blob is ranked[rankedStart[i] .. rankedStart[i + 1]) (bytes). */
  ranked: Uint8Array;
  rankedStart: Int32Array;
  extra: string[];
  /** Subject i's history rows are historyStart[i] .. historyStart[i + 1]. */
  historyStart: Int32Array;
  historyResolution: string[];
  historySeries: string[];
  /** Subject i's routed elements are routedStart[i] .. routedStart[i + 1], rank 1 first. */
  routedStart: Int32Array;
  routedSymbol: string[];
  routedShare: Float64Array;
  /** Each subject's papers (postings), ordinals ascending: postings[postingsStart[i] .. postingsStart[i + 1]). */
  postings: Int32Array;
  postingsStart: Int32Array;
}

/** Communities, in the order they are written (by topic id; by element, then topic id). */
export interface CommunityRows {
  element: Int32Array;
  topicId: Int32Array;
  paperCount: Int32Array;
  recentPapers: Int32Array;
  riRecent: Float64Array;
  riBefore: Float64Array;
  rising: Uint8Array;
}

export function topicSubjectId(topicId: number): string {
  return `T${topicId}`;
}

/** The public id of a scored entity: element symbol, topic short id, keyword slug. */
export function subjectIdOf(corpus: Corpus, s: Pick<EntityScore, 'type' | 'key'>): string {
  if (s.type === 'element') return ELEMENTS[s.key]!.symbol;
  if (s.type === 'topic') return topicSubjectId(corpus.topicIds[s.key]!);
  return corpus.keywordSlugs[s.key]!;
}

export function subjectRows(corpus: Corpus, scores: readonly EntityScore[]): SubjectRows {
  const count = scores.length;
  const rows: SubjectRows = {
    count,
    type: [],
    id: [],
    name: [],
    description: [],
    paperCount: new Int32Array(count),
    windowPapers: new Int32Array(count),
    ri: new Float64Array(count),
    ris: new Float64Array(count),
    hri: new Float64Array(count),
    totalRanked: new Int32Array(count),
    ranked: new Uint8Array(0),
    rankedStart: new Int32Array(count + 1),
    extra: [],
    historyStart: new Int32Array(count + 1),
    historyResolution: [],
    historySeries: [],
    routedStart: new Int32Array(count + 1),
    routedSymbol: [],
    routedShare: new Float64Array(0),
    postings: new Int32Array(0),
    postingsStart: new Int32Array(count + 1),
  };
  const ranked: Buffer[] = [];
  const shares: number[] = [];
  scores.forEach((s, i) => {
    const { name, description, extra } = describe(corpus, s);
    rows.type.push(s.type);
    rows.id.push(subjectIdOf(corpus, s));
    rows.name.push(name);
    rows.description.push(description);
    rows.paperCount[i] = s.paperCount;
    rows.windowPapers[i] = s.windowPapers;
    rows.ri[i] = s.ri;
    rows.ris[i] = s.ris;
    rows.hri[i] = s.hri ?? Number.NaN;
    rows.totalRanked[i] = s.ranked.length;
    const blob = encodeRanked(s.ranked);
    ranked.push(blob);
    rows.rankedStart[i + 1] = rows.rankedStart[i]! + blob.length;
    rows.extra.push(JSON.stringify(extra));
    for (const [res, series] of Object.entries(s.history)) {
      rows.historyResolution.push(res);
      rows.historySeries.push(JSON.stringify(series));
    }
    rows.historyStart[i + 1] = rows.historySeries.length;
    for (const r of s.routedElements) {
      rows.routedSymbol.push(ELEMENTS[r.element]!.symbol);
      shares.push(r.share);
    }
    rows.routedStart[i + 1] = shares.length;
  });
  // A fresh buffer of its own (Buffer.concat may take Node's shared pool, which cannot be moved).
  rows.ranked = new Uint8Array(rows.rankedStart[count]!);
  for (const [i, blob] of ranked.entries()) rows.ranked.set(blob, rows.rankedStart[i]!);
  rows.routedShare = Float64Array.from(shares);

  const inverted = {
    element: invert(corpus.elements, corpus.n, ELEMENTS.length),
    topic: invert(corpus.topics, corpus.n, corpus.topicIds.length),
    keyword: invert(corpus.keywords, corpus.n, corpus.keywordSlugs.length),
  };
  let total = 0;
  for (const s of scores) total += inverted[s.type].start[s.key + 1]! - inverted[s.type].start[s.key]!;
  rows.postings = new Int32Array(total);
  scores.forEach((s, i) => {
    const { start, papers } = inverted[s.type];
    rows.postings.set(papers.subarray(start[s.key]!, start[s.key + 1]!), rows.postingsStart[i]!);
    rows.postingsStart[i + 1] = rows.postingsStart[i]! + start[s.key + 1]! - start[s.key]!;
  });
  return rows;
}

function describe(corpus: Corpus, s: EntityScore) {
  if (s.type === 'element') {
    const e = ELEMENTS[s.key]!;
    return {
      name: e.name,
      description: e.variants.join(' '),
      extra: { number: e.number, group: e.group, period: e.period },
    };
  }
  if (s.type === 'topic') {
    const t = corpus.topicTable.get(corpus.topicIds[s.key]!);
    return {
      name: t?.name ?? topicSubjectId(corpus.topicIds[s.key]!),
      description: t?.description ?? null,
      extra: {
        subfield: t?.subfield ?? null,
        field: t?.field ?? null,
        domain: t?.domain ?? null,
        keywords: t?.keywords ?? [],
      },
    };
  }
  return { name: corpus.keywordNames[s.key]!, description: null, extra: {} };
}

/** Communities as columns, sorted as the snapshot stores them; element -1 for a topic's own. */
export function communityRows(list: readonly (Community | ElementCommunity)[]): CommunityRows {
  const elementOf = (c: Community | ElementCommunity) => ('element' in c ? c.element : -1);
  const sorted = [...list].sort((a, b) => elementOf(a) - elementOf(b) || a.topicId - b.topicId);
  const n = sorted.length;
  const rows: CommunityRows = {
    element: new Int32Array(n),
    topicId: new Int32Array(n),
    paperCount: new Int32Array(n),
    recentPapers: new Int32Array(n),
    riRecent: new Float64Array(n),
    riBefore: new Float64Array(n),
    rising: new Uint8Array(n),
  };
  sorted.forEach((c, i) => {
    rows.element[i] = elementOf(c);
    rows.topicId[i] = c.topicId;
    rows.paperCount[i] = c.paperCount;
    rows.recentPapers[i] = c.recentPapers;
    rows.riRecent[i] = c.riRecent;
    rows.riBefore[i] = c.riBefore;
    rows.rising[i] = c.rising ? 1 : 0;
  });
  return rows;
}

/** The buffers of the rows' typed columns (moved, not copied, to the writer's thread). */
export function transferablesOf(...rows: (SubjectRows | CommunityRows)[]): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const r of rows)
    for (const v of Object.values(r)) if (ArrayBuffer.isView(v)) out.add(v.buffer as ArrayBuffer);
  return [...out];
}

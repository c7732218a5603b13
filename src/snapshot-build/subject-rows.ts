import { ELEMENTS } from '../elements/elements.js';
import type { Community, ElementCommunity } from '../scoring/communities.js';
import type { Corpus, Csr } from '../scoring/corpus.js';
import { type EntityScore, invert, type SubjectType } from '../scoring/score-entities.js';
import { encodeRanked } from '../snapshot/ranked.js';

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
  /** Subject i's history rows are historyRows[i] .. historyRows[i + 1]. */
  historyRows: Int32Array;
  /** Per history row: its resolution. */
  historyResolution: string[];
  /**
   * Per history row, its series (encoded: scoring/history-codec.ts): views of the slabs the
   * scoring wrote them into, which move between threads whole (no copy into one buffer).
   */
  historySeries: Uint8Array[];
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
function subjectIdOf(corpus: Corpus, s: Pick<EntityScore, 'type' | 'key'>): string {
  if (s.type === 'element') return ELEMENTS[s.key]!.symbol;
  if (s.type === 'topic') return topicSubjectId(corpus.topicIds[s.key]!);
  return corpus.keywordSlugs[s.key]!;
}

/**
 * Lays out the scored subjects as rows, one type at a time (add), so that a type's scores can be
 * dropped once laid out: the objects of a million papers' subjects are the scoring's peak memory.
 */
export class SubjectRowsBuilder {
  private readonly type: SubjectType[] = [];
  private readonly id: string[] = [];
  private readonly name: string[] = [];
  private readonly description: (string | null)[] = [];
  private readonly numbers = {
    paperCount: [] as number[],
    windowPapers: [] as number[],
    ri: [] as number[],
    ris: [] as number[],
    hri: [] as number[],
    totalRanked: [] as number[],
  };
  private readonly extra: string[] = [];
  private readonly ranked: Buffer[] = [];
  private readonly rankedStart = [0];
  private readonly historyResolution: string[] = [];
  /** The history's series as the scoring wrote them (views of its slabs). */
  private readonly historySeries: Uint8Array[] = [];
  private readonly historyRows = [0];
  private readonly routedSymbol: string[] = [];
  private readonly routedShare: number[] = [];
  private readonly routedStart = [0];
  private readonly postings: Int32Array[] = [];
  private readonly postingsStart = [0];

  constructor(private readonly corpus: Corpus) {}

  /** Adds one type's scores (scoreEntities over csr) in their order. */
  add(
    type: SubjectType,
    csr: Csr,
    entities: number,
    scores: readonly EntityScore[],
    inverted = invert(csr, this.corpus.n, entities),
  ): void {
    const corpus = this.corpus;
    const n = this.numbers;
    for (const s of scores) {
      if (s.type !== type) throw new Error(`a ${s.type} score among the ${type} scores`);
      const { name, description, extra } = describe(corpus, s);
      this.type.push(type);
      this.id.push(subjectIdOf(corpus, s));
      this.name.push(name);
      this.description.push(description);
      n.paperCount.push(s.paperCount);
      n.windowPapers.push(s.windowPapers);
      n.ri.push(s.ri);
      n.ris.push(s.ris);
      n.hri.push(s.hri ?? Number.NaN);
      n.totalRanked.push(s.ranked.ordinals.length);
      const blob = encodeRanked(s.ranked.ordinals, s.ranked.contributions);
      this.ranked.push(blob);
      this.rankedStart.push(this.rankedStart.at(-1)! + blob.length);
      this.extra.push(JSON.stringify(extra));
      for (const [res, series] of Object.entries(s.history)) {
        this.historyResolution.push(res);
        this.historySeries.push(series);
      }
      this.historyRows.push(this.historyResolution.length);
      for (const r of s.routedElements) {
        this.routedSymbol.push(ELEMENTS[r.element]!.symbol);
        this.routedShare.push(r.share);
      }
      this.routedStart.push(this.routedSymbol.length);
      const papers = inverted.papers.subarray(inverted.start[s.key]!, inverted.start[s.key + 1]!);
      this.postings.push(papers);
      this.postingsStart.push(this.postingsStart.at(-1)! + papers.length);
    }
  }

  finish(): SubjectRows {
    const n = this.numbers;
    // Fresh buffers of their own (Buffer.concat may take Node's shared pool, which cannot be moved).
    const concat = <T extends Uint8Array | Int32Array>(parts: T[], out: T): T => {
      let at = 0;
      for (const p of parts) {
        out.set(p, at);
        at += p.length;
      }
      return out;
    };
    return {
      count: this.type.length,
      type: this.type,
      id: this.id,
      name: this.name,
      description: this.description,
      paperCount: Int32Array.from(n.paperCount),
      windowPapers: Int32Array.from(n.windowPapers),
      ri: Float64Array.from(n.ri),
      ris: Float64Array.from(n.ris),
      hri: Float64Array.from(n.hri),
      totalRanked: Int32Array.from(n.totalRanked),
      ranked: concat<Uint8Array>(this.ranked, new Uint8Array(this.rankedStart.at(-1)!)),
      rankedStart: Int32Array.from(this.rankedStart),
      extra: this.extra,
      historyRows: Int32Array.from(this.historyRows),
      historyResolution: this.historyResolution,
      historySeries: this.historySeries,
      routedSymbol: this.routedSymbol,
      routedShare: Float64Array.from(this.routedShare),
      routedStart: Int32Array.from(this.routedStart),
      postings: joined(this.postings) ?? concat(this.postings, new Int32Array(this.postingsStart.at(-1)!)),
      postingsStart: Int32Array.from(this.postingsStart),
    };
  }
}

/**
 * The lists as one view of the buffer they are consecutive parts of, when they are (one type's
 * postings are its inversion, in key order): no copy of the largest column of the rows (about
 * 0.2 GB of keywords' postings at 10M works, beside the inversion itself). Null otherwise.
 */
export function joined(parts: readonly Int32Array[]): Int32Array | null {
  const first = parts[0];
  if (!first) return null;
  let end = first.byteOffset + first.byteLength;
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i]!;
    if (p.buffer !== first.buffer || p.byteOffset !== end) return null;
    end += p.byteLength;
  }
  return new Int32Array(first.buffer, first.byteOffset, (end - first.byteOffset) / 4);
}

function describe(corpus: Corpus, s: Pick<EntityScore, 'type' | 'key'>) {
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

/** Every subject's type, id, name and description (see subjectTexts). */
export interface SubjectTexts {
  type: SubjectType[];
  id: string[];
  name: string[];
  description: (string | null)[];
}

/**
 * The subjects' search texts without their scores: every element, topic and keyword of the corpus, in the
 * search rows' order (elements, topics, keywords; each type by index), so those rows can be
 * written before the scores come.
 */
export function subjectTexts(corpus: Corpus): SubjectTexts {
  const out: SubjectTexts = { type: [], id: [], name: [], description: [] };
  const types: [SubjectType, number][] = [
    ['element', ELEMENTS.length],
    ['topic', corpus.topicIds.length],
    ['keyword', corpus.keywordSlugs.length],
  ];
  for (const [type, count] of types)
    for (let key = 0; key < count; key++) {
      const { name, description, extra } = describe(corpus, { type, key });
      out.type.push(type);
      out.id.push(subjectIdOf(corpus, { type, key }));
      out.name.push(name);
      // A topic is searched by its taxonomy keywords too (the research search reads them as the
      // community's own words); the subject's description shown stays the taxonomy's.
      const keywords = ('keywords' in extra ? extra.keywords : undefined) ?? [];
      out.description.push(
        keywords.length > 0 ? `${description ?? ''} Keywords: ${keywords.join('; ')}.`.trim() : description,
      );
    }
  return out;
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
    for (const v of Object.values(r)) {
      if (ArrayBuffer.isView(v)) out.add(v.buffer as ArrayBuffer);
      else if (Array.isArray(v))
        for (const x of v) if (ArrayBuffer.isView(x)) out.add(x.buffer as ArrayBuffer);
    }
  return [...out];
}

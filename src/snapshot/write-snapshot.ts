import Database from 'better-sqlite3';
import { ELEMENTS } from '../elements/elements.js';
import type { CorpusStore } from '../ingest/corpus-store.js';
import type { Clusters } from '../scoring/clusters.js';
import type { Community, ElementCommunity } from '../scoring/communities.js';
import type { Corpus } from '../scoring/corpus.js';
import type { PaperImpact } from '../scoring/impact.js';
import { type EntityScore, invert, type PeriodTotals } from '../scoring/score-entities.js';
import { encodeRanked } from './ranked.js';
import { SNAPSHOT_INDEXES, SNAPSHOT_SCHEMA } from './schema.js';

export interface SnapshotContent {
  corpus: Corpus;
  impact: PaperImpact;
  clusters: Clusters;
  scores: EntityScore[];
  periods: PeriodTotals[];
  communities: Community[];
  elementCommunities: ElementCommunity[];
  /** Each paper's position in the global ranking order (ranking rule of docs/metrics.md). */
  rankPosition: Int32Array;
  /** Each paper's recency weight at the cut-off (the RIS term), 0 without a date. */
  recencyNow: Float64Array;
  meta: Record<string, string | number>;
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

/**
 * Writes a complete snapshot file. Every row is written in a fixed order so the same corpus
 * gives the same bytes, and so the same data_version. Paper texts (DOI, title, venue, date)
 * stream from the corpus store, in ordinal order, and never sit in memory all at once.
 */
export async function writeSnapshot(
  path: string,
  content: SnapshotContent,
  store: CorpusStore,
  log: (msg: string) => void,
): Promise<void> {
  const db = new Database(path);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('page_size = 8192');
  db.pragma('cache_size = -131072'); // 128 MB: the build's peak memory budget is shared with the corpus
  db.exec(SNAPSHOT_SCHEMA);
  const { corpus } = content;

  db.exec('BEGIN');
  await writePapers(db, content, store);
  db.exec('COMMIT');
  log(`  papers: ${corpus.n}`);

  const insert = db.transaction(() => {
    const meta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    for (const [k, v] of Object.entries(content.meta).sort(([a], [b]) => a.localeCompare(b)))
      meta.run(k, String(v));

    const periods = db.prepare('INSERT INTO periods VALUES (?, ?, ?, ?)');
    for (const p of content.periods) periods.run(p.resolution, p.period, p.papers, p.highImpactPapers);

    writeSubjects(db, content);
    log(`  subjects: ${content.scores.length}`);
    writeLabColumns(db, content);

    const community = db.prepare('INSERT INTO communities VALUES (?, ?, ?, ?, ?, ?)');
    for (const c of [...content.communities].sort((a, b) => a.topicId - b.topicId)) {
      community.run(
        topicSubjectId(c.topicId),
        c.paperCount,
        c.recentPapers,
        c.riRecent,
        c.riBefore,
        c.rising ? 1 : 0,
      );
    }
    const elementCommunity = db.prepare('INSERT INTO element_communities VALUES (?, ?, ?, ?, ?, ?, ?)');
    for (const c of [...content.elementCommunities].sort(
      (a, b) => a.element - b.element || a.topicId - b.topicId,
    )) {
      elementCommunity.run(
        ELEMENTS[c.element]!.symbol,
        topicSubjectId(c.topicId),
        c.paperCount,
        c.recentPapers,
        c.riRecent,
        c.riBefore,
        c.rising ? 1 : 0,
      );
    }
  });
  insert();
  db.exec("INSERT INTO papers_fts (papers_fts) VALUES ('rebuild')");
  log('  full-text index built');
  db.exec(SNAPSHOT_INDEXES);
  db.pragma('journal_mode = DELETE');
  db.close();
}

async function writePapers(
  db: Database.Database,
  { corpus, impact, clusters }: SnapshotContent,
  store: CorpusStore,
) {
  const stmt = db.prepare('INSERT INTO papers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const list = (csr: Corpus['topics'], p: number, name: (v: number) => string) => {
    let out = '';
    for (let i = csr.start[p]!; i < csr.start[p + 1]!; i++) out += (out ? ',' : '') + name(csr.values[i]!);
    return out;
  };
  const nullable = (v: number) => (Number.isNaN(v) ? null : v);
  const symbol = (e: number) => ELEMENTS[e]!.symbol;
  const topicId = (t: number) => topicSubjectId(corpus.topicIds[t]!);
  const slug = (k: number) => corpus.keywordSlugs[k]!;
  await store.forEachChunk(
    'SELECT o, doi, title, venue, pub_date FROM works JOIN ord USING (id) ORDER BY o',
    (chunk) => {
      const [ordinals, dois, titles, venues, dates] = [0, 1, 2, 3, 4].map((c) => chunk.getColumnVector(c));
      for (let i = 0; i < chunk.rowCount; i++) {
        const p = ordinals!.getItem(i) as number;
        const rs = corpus.refs.start[p]!;
        const re = corpus.refs.start[p + 1]!;
        const cluster = clusters.topic[p]!;
        stmt.run(
          p,
          corpus.workId[p],
          dois!.getItem(i),
          titles!.getItem(i),
          venues!.getItem(i),
          corpus.year[p] || null,
          dates!.getItem(i),
          corpus.citations[p]! >= 0 ? corpus.citations[p] : null,
          nullable(impact.impactScore[p]!),
          nullable(impact.citationPercentile[p]!),
          impact.highImpact[p],
          cluster === -1 ? null : cluster,
          cluster === -1 ? null : clusters.fromCitations[p] ? 'citations' : 'topic',
          list(corpus.elements, p, symbol),
          list(corpus.topics, p, topicId),
          list(corpus.keywords, p, slug),
          re > rs
            ? Buffer.from(corpus.refs.values.buffer, corpus.refs.values.byteOffset + rs * 4, (re - rs) * 4)
            : null,
        );
      }
    },
  );
}

function writeSubjects(db: Database.Database, { corpus, scores }: SnapshotContent): void {
  const subject = db.prepare('INSERT INTO subjects VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const fts = db.prepare('INSERT INTO subjects_fts (type, id, name, description) VALUES (?, ?, ?, ?)');
  const history = db.prepare('INSERT INTO history VALUES (?, ?, ?, ?)');
  const routed = db.prepare('INSERT INTO routed_elements VALUES (?, ?, ?, ?, ?)');
  for (const s of scores) {
    const id = subjectIdOf(corpus, s);
    const { name, description, extra } = describe(corpus, s);
    subject.run(
      s.type,
      id,
      name,
      description,
      s.paperCount,
      s.windowPapers,
      s.ri,
      s.ris,
      s.hri,
      s.ranked.length,
      encodeRanked(s.ranked),
      JSON.stringify(extra),
    );
    fts.run(s.type, id, name, description);
    for (const [res, series] of Object.entries(s.history))
      history.run(s.type, id, res, JSON.stringify(series));
    s.routedElements.forEach((r, i) => {
      routed.run(s.type, id, i + 1, ELEMENTS[r.element]!.symbol, r.share);
    });
  }
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

/** A typed array's bytes as a Buffer (no copy). */
const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/**
 * What the lab's set algebra reads: every subject's postings (its papers, ordinals ascending)
 * and whole-corpus columns by ordinal. Loaded as typed arrays in one read per snapshot.
 */
function writeLabColumns(db: Database.Database, content: SnapshotContent): void {
  const { corpus, clusters, scores } = content;
  const inverted = {
    element: invert(corpus.elements, corpus.n, ELEMENTS.length),
    topic: invert(corpus.topics, corpus.n, corpus.topicIds.length),
    keyword: invert(corpus.keywords, corpus.n, corpus.keywordSlugs.length),
  };
  const posting = db.prepare('INSERT INTO postings VALUES (?, ?, ?)');
  for (const s of scores) {
    const { start, papers } = inverted[s.type];
    posting.run(s.type, subjectIdOf(corpus, s), bytesOf(papers.subarray(start[s.key]!, start[s.key + 1]!)));
  }
  const column = db.prepare('INSERT INTO paper_columns VALUES (?, ?)');
  column.run('year', bytesOf(corpus.year));
  column.run('cluster', bytesOf(clusters.topic));
  column.run('rank_position', bytesOf(content.rankPosition));
  column.run('recency', bytesOf(content.recencyNow));
}

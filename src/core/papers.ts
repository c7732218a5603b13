import { decodeRanked } from '../snapshot/ranked.js';
import type { Snapshot } from '../snapshot/snapshot.js';

/** A paper as every paper list shows it (spec part 2). Abstracts are never returned. */
export interface PaperEntry {
  title: string | null;
  doi: string | null;
  venue: string | null;
  year: number | null;
  citations: number | null;
  link: string;
  impact_score: number | null;
  citation_percentile: number | null;
  /** The paper's research community: a topic id (its primary topic, or one found by citations). */
  cluster: string | null;
  cluster_name: string | null;
  rank: number;
  ris_contribution: number;
  publication_date: string | null;
  elements: string[];
}

interface PaperRow {
  ordinal: number;
  work_id: number;
  doi: string | null;
  title: string | null;
  venue: string | null;
  year: number | null;
  pub_date: string | null;
  citations: number | null;
  impact_score: number | null;
  citation_percentile: number | null;
  cluster: number | null;
  elements: string;
}

/**
 * The ranked papers of an element, topic or keyword (at most 100, rank 1 first), with every
 * field of the spec; null when the subject does not exist in this snapshot.
 */
export function rankedPapers(
  snapshot: Snapshot,
  type: 'element' | 'topic' | 'keyword',
  id: string,
): { papers: PaperEntry[]; totalRanked: number; totalPapers: number } | null {
  const subject = snapshot.db
    .prepare('SELECT ranked, total_ranked, paper_count FROM subjects WHERE type = ? AND id = ?')
    .get(type, id) as { ranked: Buffer; total_ranked: number; paper_count: number } | undefined;
  if (!subject) return null;
  const ranked = decodeRanked(subject.ranked);
  const rows = snapshot.db
    .prepare(
      `SELECT p.ordinal, p.work_id, p.doi, p.title, p.venue, p.year, p.pub_date, p.citations, p.impact_score,
              p.citation_percentile, p.cluster, p.elements
       FROM papers p WHERE p.ordinal IN (SELECT value FROM json_each(?))`,
    )
    .all(JSON.stringify(ranked.map((r) => r.ordinal))) as PaperRow[];
  const byOrdinal = new Map(rows.map((r) => [r.ordinal, r]));
  const clusterNames = snapshot.db
    .prepare("SELECT name FROM subjects WHERE type = 'topic' AND id = ?")
    .pluck();
  const papers = ranked.map((r) => {
    const p = byOrdinal.get(r.ordinal)!;
    const cluster = p.cluster === null ? null : `T${p.cluster}`;
    return {
      title: p.title,
      doi: p.doi,
      venue: p.venue,
      year: p.year,
      citations: p.citations,
      link: p.doi ? `https://doi.org/${p.doi}` : `https://openalex.org/W${p.work_id}`,
      impact_score: p.impact_score,
      citation_percentile: p.citation_percentile,
      cluster,
      cluster_name: cluster ? ((clusterNames.get(cluster) as string | undefined) ?? null) : null,
      rank: r.rank,
      ris_contribution: r.risContribution,
      publication_date: p.pub_date,
      elements: p.elements ? p.elements.split(',') : [],
    };
  });
  return { papers, totalRanked: subject.total_ranked, totalPapers: subject.paper_count };
}

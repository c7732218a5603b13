import type { ResearchQueries } from '../../snapshot/reader.js';
import type { Community, ElementCommunity } from '../research.js';
import type { Viewer } from '../viewer.js';
import type { CandidateRow } from './candidates.js';
import type { MatchedPaper } from './match.js';
import { groupExpr, questionElements, type TermGroup } from './question.js';

/**
 * The research communities behind a question: topics whose descriptions match it and topics most
 * of the matching papers belong to; and inside them, the sub-communities of the question's elements.
 */

/** Communities: topics whose descriptions match, and topics most of the matching papers belong to. */
export function matchCommunities(
  reader: ResearchQueries,
  groups: TermGroup[],
  candidates: MatchedPaper[],
  rows: Map<number, CandidateRow>,
  viewer: Viewer,
): Community[] {
  const byCluster = new Map<number, number>();
  for (const m of candidates) {
    const c = rows.get(m.ordinal)?.cluster;
    if (c != null) byCluster.set(c, (byCluster.get(c) ?? 0) + 1);
  }
  const described = new Set<string>();
  if (groups.length > 0) {
    const expr = groups.map(groupExpr).join(' AND ');
    for (const id of reader.describedTopics(expr)) described.add(id);
  }
  const ids = new Set<string>([
    ...described,
    ...[...byCluster]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([t]) => `T${t}`),
  ]);
  const out: Community[] = [];
  for (const id of ids) {
    const row = reader.community(id);
    if (!row) continue;
    const n = byCluster.get(Number(id.slice(1))) ?? 0;
    const reasons = [
      ...(n > 0 ? [`${n} of the ${candidates.length} matching papers belong to it`] : []),
      ...(described.has(id) ? ['its description matches the question'] : []),
    ];
    out.push({
      subject_type: 'topic',
      subject_id: row.id,
      name: row.name,
      description: row.description,
      matching_papers: n,
      rising: row.rising === 1,
      reason: reasons.join('; '),
      canonical_url: `${viewer.publicUrl}/subjects/topic/${row.id}`,
    });
  }
  return out
    .sort((a, b) => b.matching_papers - a.matching_papers || a.subject_id.localeCompare(b.subject_id))
    .slice(0, 10);
}

/** Element sub-communities: the question's elements inside the matched communities. */
export function matchElementCommunities(
  reader: ResearchQueries,
  q: string,
  communities: Community[],
): ElementCommunity[] {
  const symbols = questionElements(q);
  if (symbols.size === 0 || communities.length === 0) return [];
  const out: ElementCommunity[] = [];
  for (const symbol of symbols) {
    for (const c of communities) {
      const row = reader.elementCommunity(symbol, c.subject_id);
      if (!row) continue;
      out.push({
        symbol,
        topic_id: c.subject_id,
        topic_name: c.name,
        papers: row.paper_count,
        rising: row.rising === 1,
        reason: `${row.paper_count} papers of '${c.name}' name ${symbol} in their titles`,
      });
    }
  }
  return out.sort((a, b) => b.papers - a.papers).slice(0, 10);
}

/**
 * How each metric should and should not be read, written for this data: the window, the corpus
 * size, how much of it has citation data. Every answer carries these notes (their contract:
 * NotesSchema).
 */
import { type Edition, requiredPlan } from '../access/policy.js';
import type { Notes } from '../contracts/common.js';
import type { SnapshotStamp } from '../snapshot/reader.js';

export const PAPER_NOTES =
  'Papers are ranked by impact_score: citations projected to a common age (young papers pulled toward their ' +
  'field-and-year mean), as a percentile within field and publication year. Papers with unknown citations come ' +
  'after every paper with known citations, newest first. Only the top 100 papers of a subject are ranked. ' +
  "ris_contribution is a paper's weight toward the subject's RIS (recent papers weigh more); it is NOT a " +
  'measure of importance: do not sort by it. Abstracts are never returned; the DOI points to the source record.';

export const HISTORY_NOTES =
  'Each period holds RI, RIS and HRI computed from the papers of that period alone (RIS against the ' +
  'most-researched subject of the same type in that period). The series is contiguous from the first period ' +
  'with a paper of this subject to the current one (the period of the corpus cut-off): a period without a paper ' +
  'is present with papers, RI and RIS 0 (HRI 0, or null where the corpus has no high-impact paper that period). ' +
  'The current period may be incomplete.';

export function metricNotes(
  snapshot: SnapshotStamp,
  options: { hriAvailable: boolean; upgradeUrl: string; edition?: Edition },
): Notes {
  const m = snapshot.meta;
  const withCitations = Number(m.papers_with_citations ?? 0);
  const total = Number(m.corpus_papers ?? 0);
  // HRI is shown from Personal up (HRI_ACCESS), named as the edition names it (the older: Enterprise).
  const plan = requiredPlan('personal', options.edition ?? 'full');
  const hriPlan = `the ${plan[0]!.toUpperCase()}${plan.slice(1)} plan${plan === 'personal' ? ' or above' : ''}`;
  return {
    ri:
      `RI (research intensity): fractional papers on this subject per 10,000 corpus papers published ` +
      `${m.window_start} to ${m.window_end} (${m.window_papers} papers). A share of research output, ` +
      `not a measure of quality or importance; a paper naming several subjects counts a fraction for each.`,
    ris:
      'RIS (research intensity score): 0-100, recency-weighted paper count (weight halves about every ' +
      '2 years) on a log scale relative to the most-researched subject of the same type (100). Compare ' +
      'subjects of the same type only; it is not a percentage and not comparable across data versions.',
    hri: options.hriAvailable
      ? `HRI (high-impact research intensity): the same share as RI, among high-impact papers only (top 10% ` +
        `by impact_score within their field and year; ${m.window_high_impact_papers} in the window). HRI above ` +
        `RI means over-representation in high-impact work. Null where no paper in the window has citation data.`
      : `HRI is null: it needs ${hriPlan}. Get a key and a plan at ${options.upgradeUrl}.`,
    data:
      `Corpus cut-off ${m.cutoff_date}: ${total} works, of which ${withCitations} have citation data; works ` +
      `without it have unknown impact (never counted as zero). Papers count only for their headline elements ` +
      '(named in the title), topics and keywords.',
    cite: citeNote(snapshot.version),
  };
}

/**
 * Names only the answer's own data_version, so a pinned answer carries the same note, byte for
 * byte, as when its version was current.
 */
function citeNote(version: string): string {
  return (
    `To cite this answer, give its canonical_url and its data_version (${version}). Asked again with ` +
    `data_version=${version} (or the RI-Data-Version header) while that version is kept (GET /v1/versions ` +
    'lists the kept ones), the service gives the same answer.'
  );
}

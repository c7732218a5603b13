import type { Plan } from '../access/plans.js';
import { type Edition, HRI_ACCESS, planAllows } from '../access/policy.js';
import type { Envelope, Notes } from '../contracts/common.js';
import type { SnapshotStamp } from '../snapshot/reader.js';
import { metricNotes } from './notes.js';

/** What the caller may see: set by the front door from the caller's plan. */
export interface Viewer {
  /** HRI is shown from the Personal plan up. */
  hriAvailable: boolean;
  publicUrl: string;
  /** The edition served (default full): the notes name only its plans. */
  edition?: Edition;
}

/** The view of a caller on a plan (null: no key), the same for every front door (REST, MCP, web). */
export function viewerFor(plan: Plan | null, edition: Edition, publicUrl: string): Viewer {
  return { hriAvailable: plan !== null && planAllows(plan, HRI_ACCESS, edition), publicUrl, edition };
}

/**
 * A subject's page path. Keyword slugs can hold '/' (homo/lumo) and letters beyond Latin-1
 * (δ18o): escaped, the URL names the one page, and fits an HTTP header (a CSV's Link).
 */
export function subjectPath(type: string, id: string): string {
  return `/subjects/${type}/${encodeURIComponent(id)}`;
}

/** Where a caller without the plan is sent. */
const upgradeUrl = (viewer: Viewer) => `${viewer.publicUrl}/pricing`;

/**
 * A list of an answer and why it would be empty, one sentence ("papers is empty: ..."), made only
 * when it is. Lists that report problems (ignored, unmatched_terms, not_offered) are not named:
 * they are empty when there is none; nor is a lab quote's broader unless the quote is narrow.
 */
export type ListWhyEmpty = readonly [list: readonly unknown[], why: () => string];

/**
 * The fields every answer carries: attribution URL (a web page), notes, data version. Every list
 * of results the answer holds is named in `lists`, so that one that comes back empty says why in
 * notes.empty (after any reason the answer gives itself in extraNotes.empty).
 */
export function envelope(
  snapshot: SnapshotStamp,
  viewer: Viewer,
  canonicalPath: string,
  extraNotes: Partial<Notes> = {},
  lists: readonly ListWhyEmpty[] = [],
): Envelope {
  const reasons = extraNotes.empty ? [extraNotes.empty] : [];
  for (const [list, why] of lists) if (list.length === 0) reasons.push(why());
  return {
    canonical_url: `${viewer.publicUrl}${canonicalPath}`,
    notes: {
      ...metricNotes(snapshot, {
        hriAvailable: viewer.hriAvailable,
        upgradeUrl: upgradeUrl(viewer),
        edition: viewer.edition ?? 'full',
      }),
      ...extraNotes,
      ...(reasons.length > 0 ? { empty: reasons.join(' ') } : {}),
    },
    data_version: snapshot.version,
  };
}

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

/** Where a caller without the plan is sent. */
const upgradeUrl = (viewer: Viewer) => `${viewer.publicUrl}/pricing`;

/** The fields every answer carries: attribution URL (a web page), notes, data version. */
export function envelope(
  snapshot: SnapshotStamp,
  viewer: Viewer,
  canonicalPath: string,
  extraNotes: Partial<Notes> = {},
): Envelope {
  return {
    canonical_url: `${viewer.publicUrl}${canonicalPath}`,
    notes: {
      ...metricNotes(snapshot, {
        hriAvailable: viewer.hriAvailable,
        upgradeUrl: upgradeUrl(viewer),
        edition: viewer.edition ?? 'full',
      }),
      ...extraNotes,
    },
    data_version: snapshot.version,
  };
}

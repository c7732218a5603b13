/**
 * The history resolutions the build computes a series for. A leaf (it imports nothing), so the
 * access table (which plan may ask for which: RESOLUTION_ACCESS) and the contracts can name them
 * without depending on the scoring layer above them.
 */
export const RESOLUTIONS = ['yearly', 'monthly', 'daily'] as const;
export type Resolution = (typeof RESOLUTIONS)[number];

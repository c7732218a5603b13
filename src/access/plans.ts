/**
 * The plans an account can have. The access policy that maps a plan to endpoints,
 * history resolutions and HRI lives elsewhere; this module only names the plans and parses them.
 */
export const PLANS = ['free', 'personal', 'professional', 'enterprise'] as const;

export type Plan = (typeof PLANS)[number];

export class UnknownPlanError extends Error {
  constructor(readonly input: string) {
    super(`unknown plan '${input}' (expected one of: ${PLANS.join(', ')})`);
    this.name = 'UnknownPlanError';
  }
}

function isPlan(s: unknown): s is Plan {
  return typeof s === 'string' && (PLANS as readonly string[]).includes(s);
}

/** Case-insensitive, surrounding whitespace ignored; throws UnknownPlanError for anything else. */
export function parsePlan(s: string): Plan {
  const normalised = s.trim().toLowerCase();
  if (isPlan(normalised)) return normalised;
  throw new UnknownPlanError(s);
}

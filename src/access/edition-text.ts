import type { Edition } from './policy.js';

/**
 * A text written for the full edition (plans Personal and Professional) as the edition served says
 * it. The older edition has one gated plan, Enterprise, in place of both (requiredPlan), so each
 * plan name becomes Enterprise, and a tier "and up" ("Personal+") is plainly Enterprise, its top.
 * The descriptions every door shares (the operations', the parameters') are written once, for the
 * full edition; the MCP server, the OpenAPI document and the skill word them with this.
 */
export function editionText(text: string, edition: Edition): string {
  return edition === 'full' ? text : text.replace(/\b(?:Personal|Professional)\b\+?/g, 'Enterprise');
}

/**
 * Every description and summary in a JSON value (a tool's input schema, the OpenAPI document)
 * through editionText, in place. Only those, and none in an example: data (a topic's description,
 * a paper's title) is left as it is.
 */
export function editionDescriptions<T>(value: T, edition: Edition): T {
  if (edition === 'full' || value === null || typeof value !== 'object') return value;
  const node = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(node)) {
    if (typeof v === 'string') {
      if (key === 'description' || key === 'summary') node[key] = editionText(v, edition);
    } else if (key !== 'example' && key !== 'examples') editionDescriptions(v, edition);
  }
  return value;
}

import { ServiceError } from './errors.js';

/**
 * Parameters of which exactly one must be given (q or paper; query or markdown; quote_id or
 * quote; MCP's lab_quote: q, query or markdown): 400 invalid_parameter naming the first when none
 * is given, else the second one given.
 */
export function requireExactlyOne(given: Record<string, unknown>, what: string): void {
  const names = Object.keys(given);
  const present = names.filter((name) => given[name] !== undefined);
  if (present.length === 1) return;
  const rule = names.length === 2 ? `either ${what}, not both or neither` : `exactly one of ${what}`;
  throw new ServiceError('invalid_parameter', `Give ${rule}.`, {
    parameter: present.length === 0 ? names[0] : present[1],
  });
}

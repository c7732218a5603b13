import { ServiceError } from './errors.js';

/**
 * Two parameters of which exactly one must be given (q or paper; query or markdown; quote_id or
 * quote): 400 invalid_parameter naming the one to add, or the second of two.
 */
export function requireExactlyOne(given: Record<string, unknown>, what: string): void {
  const [first, second] = Object.keys(given) as [string, string];
  const present = Object.entries(given).filter(([, v]) => v !== undefined);
  if (present.length === 1) return;
  throw new ServiceError('invalid_parameter', `Give either ${what}, not both or neither.`, {
    parameter: present.length === 0 ? first : second,
  });
}

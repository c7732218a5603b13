/**
 * Quote identity and integrity. The quote_id is a function of the canonical query and the data
 * version (same query, same data: same id), keyed with the service's secret so that only the
 * service can name one: a stored quote is run by whoever bought it, not by anyone who can hash a
 * query. The signature is an HMAC over the quote's content, data version and expiry, so an edited
 * quote is detected without keeping any state.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json.js';

export function quoteId(canonicalQuery: string, dataVersion: string, secret: string): string {
  const digest = createHmac('sha256', secret)
    .update(`quote_id\n${canonicalQuery}\n${dataVersion}`)
    .digest('base64url');
  return `q_${digest.slice(0, 24)}`;
}

/** Fields outside the signature: the signature itself and the envelope (attribution, notes). */
const UNSIGNED = new Set(['signature', 'canonical_url', 'notes']);

function signedContent(quote: Record<string, unknown>): string {
  return canonicalJson(Object.fromEntries(Object.entries(quote).filter(([k]) => !UNSIGNED.has(k))));
}

export function signQuote(quote: Record<string, unknown>, secret: string): string {
  return createHmac('sha256', secret).update(signedContent(quote)).digest('base64url');
}

/** Deeper than any quote this service issues: such a "quote" is refused unread (no deep recursion). */
const MAX_QUOTE_DEPTH = 16;

function depthWithin(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (limit === 0) return false;
  for (const v of Object.values(value as Record<string, unknown>))
    if (!depthWithin(v, limit - 1)) return false;
  return true;
}

export function verifyQuote(quote: Record<string, unknown>, secret: string): boolean {
  const given = quote.signature;
  if (typeof given !== 'string' || !depthWithin(quote, MAX_QUOTE_DEPTH)) return false;
  const expected = Buffer.from(signQuote(quote, secret));
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

import type { Context } from 'hono';
import { getQueryParams } from 'hono/utils/url';
import type { Operation, RequestTerms } from '../access/policy.js';
import { queryTerms } from '../contracts/queries.js';

/**
 * What of a REST request its level and price read (its resolution and paper limit), from its
 * query as its route's schema parses it (contracts/queries.ts); null when the query does not
 * parse, which the route answers 400 before any charge. The query is taken from the URL as the
 * route's validator takes it (a name given once is a string, given twice a list), so the front's
 * small context (front.ts) reads it too.
 */
export function requestTerms(c: Pick<Context, 'req'>, op: Operation): RequestTerms | null {
  const params = getQueryParams(c.req.url) as Record<string, string[]>;
  const query = Object.fromEntries(
    Object.entries(params).map(([name, values]) => [name, values.length === 1 ? values[0] : values]),
  );
  return queryTerms(op.id, query);
}

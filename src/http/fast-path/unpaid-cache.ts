import type { Context } from 'hono';
import type { AppEnv } from '../context.js';
import { prefersCsv } from '../csv.js';
import { routeLabel } from '../metrics.js';
import type { Middleware } from '../middleware.js';
import { markPrecompressed } from './compression.js';
import { FastPathContext } from './fast-path.js';
import { FastPathResponse } from './handoff.js';
import { takeResponseHeaders } from './response-headers.js';

/**
 * The unpaid 402 of a priced GET: the same for every caller without a key or a payment, for one
 * snapshot, URL and set of terms. Kept ready like a cached answer (the fast path writes it with no
 * Hono objects), so stating the terms costs what a cached answer costs; only the request id in the
 * body differs per request and is put in on the way out. Any other answer (the route's own 4xx, a
 * 503) is not kept and is made again each time, as before.
 */
interface Kept {
  route: string;
  headers: Record<string, string>;
  /** The problem body without its request id, and without its opening brace. */
  rest: string;
}

/** Distinct unpaid URLs kept per snapshot at most (all dropped when full: a bound, not an LRU). */
const MAX_KEPT = 1_000;
const MISS = 'unpaidCacheMiss';
type WithMiss = AppEnv & { Variables: { [MISS]?: { key: string; store: Map<string, Kept> } } };

/** `generation` changes whenever the terms may (the networks offered). */
export function unpaidCache(generation: () => number): Middleware<Context<AppEnv>> {
  return {
    enter(c) {
      const payment = c.get('payment');
      if (!payment || payment.paymentSent || c.req.method !== 'GET') return undefined;
      // A lab run's 402 stands only while its quote does (an expired quote is refused before any
      // payment is asked): made again each time.
      if (payment.op.pricedByQuote) return undefined;
      const url = c.req.url;
      const form = prefersCsv(c.req.header('accept')) ? 'csv|' : '';
      const key = `${generation()}|${form}${url.slice(url.indexOf('/', url.indexOf('//') + 2))}`;
      const store = c.get('snapshot').memoize('unpaid-402', () => new Map<string, Kept>());
      const kept = store.get(key);
      if (kept) {
        if (c instanceof FastPathContext) c.route = kept.route;
        return answer(c, kept);
      }
      (c as Context<WithMiss>).set(MISS, { key, store });
      return undefined;
    },
    async exit(c) {
      const miss = (c as Context<WithMiss>).get(MISS);
      if (!miss || c.res.status !== 402 || !c.res.headers.get('payment-required')) return;
      const body = JSON.parse(await c.res.clone().text()) as Record<string, unknown>;
      if (body.code !== 'payment_required') return;
      const { request_id: _id, ...rest } = body;
      if (miss.store.size >= MAX_KEPT) miss.store.clear();
      miss.store.set(miss.key, {
        route: routeLabel(c),
        headers: {
          'content-type': 'application/problem+json',
          'cache-control': 'no-store',
          'payment-required': c.res.headers.get('payment-required')!,
          // As compression (which leaves a kept answer alone) says of the first 402, made by the route.
          vary: 'Accept-Encoding',
        },
        rest: JSON.stringify(rest).slice(1),
      });
    },
  };
}

function answer(c: Context<AppEnv>, kept: Kept): Response {
  const id = c.get('requestId') as string | undefined;
  const body = id === undefined ? `{${kept.rest}` : `{"request_id":${JSON.stringify(id)},${kept.rest}`;
  markPrecompressed(c);
  const headers = takeResponseHeaders(c, kept.headers, true);
  if (headers && c instanceof FastPathContext)
    return new FastPathResponse(402, headers, Buffer.from(body)) as unknown as Response;
  if (headers) return new Response(body, { status: 402, headers });
  return c.body(body, 402, kept.headers);
}

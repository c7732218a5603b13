import {
  type Edition,
  isPriced,
  LAB_DEPTHS,
  LAB_QUOTE_USD,
  OPERATIONS,
  type Operation,
  PAID_CALL_RULE,
  usdText,
} from '../access/policy.js';
import { NETWORKS, type NetworkName } from './networks.js';

/** The price of an operation as the table states it: one price, tiers by limit, or the quote's. */
export function priceInfo(op: Operation) {
  if (op.pricedByQuote) {
    return {
      rule: `the quoted price of the depth minus the ${usdText(LAB_QUOTE_USD)} the quote cost`,
      by_depth_usd: Object.fromEntries(
        Object.entries(LAB_DEPTHS).map(([depth, d]) => [
          depth,
          Math.round((d.usd - LAB_QUOTE_USD) * 1e6) / 1e6,
        ]),
      ),
    };
  }
  if (op.perSymbol)
    return {
      usd: op.prices[0]!.usd,
      per: 'symbol',
      rule: 'per symbol in the symbols parameter, times the symbols',
    };
  if (op.prices.length === 1) return { usd: op.prices[0]!.usd };
  return {
    rule: 'by the limit parameter (default 20)',
    tiers: op.prices.map((t) => ({ up_to_papers: t.upToPapers ?? null, usd: t.usd })),
  };
}

/**
 * Who may make a call and what it costs without a key, from the access table: the last sentence
 * of an MCP tool's description and of an OpenAPI operation's.
 */
export function accessText(op: Operation, edition: Edition, payments: boolean): string {
  const who = {
    public: 'Free, no key.',
    key: 'Any key (free account).',
    personal: edition === 'full' ? 'Personal plan.' : 'Enterprise plan.',
    professional: edition === 'full' ? 'Professional plan.' : 'Enterprise plan.',
  }[op.access];
  if (!isPriced(op) || !payments) return who;
  const price = priceInfo(op) as {
    usd?: number;
    rule?: string;
    tiers?: { up_to_papers: number | null; usd: number }[];
  };
  const cost = price.tiers
    ? price.tiers.map((t) => `${usdText(t.usd)} (limit <= ${t.up_to_papers})`).join(', ')
    : price.usd !== undefined
      ? `${usdText(price.usd)}${op.perSymbol ? ' per symbol' : ''}`
      : (price.rule ?? '');
  return `${who} x402: ${cost}.`;
}

export const PRICED_OPERATIONS: readonly Operation[] = OPERATIONS.filter(isPriced);

/** How a priced operation is paid: the x-payment-info extension of the OpenAPI document. */
export function paymentInfo(op: Operation, offered: readonly NetworkName[]) {
  return {
    protocol: 'x402',
    x402Version: 2,
    scheme: 'exact',
    asset: 'USDC',
    price: priceInfo(op),
    networks: offered.map((n) => NETWORKS[n].caip2),
  };
}

/**
 * GET /.well-known/x402: every priced operation, its price or price rule, networks and
 * description. A server that takes no per-call payment says so (enabled false, no operations).
 */
export function discoveryDocument(publicUrl: string, offered: readonly NetworkName[]) {
  if (offered.length === 0)
    return {
      x402Version: 2,
      service: 'Research-Intensity Data Service',
      enabled: false,
      detail: "This server takes no per-call payment: use an API key ('Authorization: Bearer <API_KEY>').",
      networks: [],
      operations: [],
    };
  return {
    x402Version: 2,
    service: 'Research-Intensity Data Service',
    enabled: true,
    networks: offered.map((n) => ({ name: n, network: NETWORKS[n].caip2, label: NETWORKS[n].label })),
    how_to_pay:
      'Call the operation with no key: the 402 answer carries the terms in PAYMENT-REQUIRED. Sign them with an x402 client and repeat the request with PAYMENT-SIGNATURE; the receipt returns in PAYMENT-RESPONSE. Errors are never charged. If the answer is 503 settlement_pending, repeat the same request with the same PAYMENT-SIGNATURE: you are charged at most once.',
    what_a_payment_buys: PAID_CALL_RULE,
    operations: PRICED_OPERATIONS.map((op) => ({
      method: op.method,
      path: `/v1${op.path}`,
      url: `${publicUrl}/v1${op.path}`,
      description: op.description,
      access_with_key: op.access,
      ...paymentInfo(op, offered),
    })),
  };
}

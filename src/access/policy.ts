/**
 * The access and price table: one row per operation, read by every front door
 * (REST routes, later MCP tools and the x402 layer) and by the OpenAPI generator. Change a
 * price or a plan rule here and nowhere else.
 */
import type { Resolution } from '../scoring/resolutions.js';
import type { Plan } from './plans.js';

// Named here too because RESOLUTION_ACCESS is keyed by it (the guard reads the two together).
/** Papers a paper list returns when no limit is given, and at most (only the top 100 are ranked). */
export const DEFAULT_PAPER_LIMIT = 20;
export const MAX_PAPER_LIMIT = 100;

export type { Resolution } from '../scoring/resolutions.js';

/** Who may call: anyone, any key, or a key on at least this plan tier. */
export type AccessLevel = 'public' | 'key' | 'personal' | 'professional';
/** The editions a server runs as (EDITION): the full one, or the older one with Enterprise as its one gated plan. */
export const EDITIONS = ['full', 'enterprise'] as const;
export type Edition = (typeof EDITIONS)[number];

interface PriceTier {
  /** Applies when the requested paper count is at most this (undefined: any request). */
  upToPapers?: number;
  usd: number;
}

export interface Operation {
  id: string;
  method: 'GET' | 'POST';
  /** Path under /v1, in OpenAPI form. */
  path: string;
  access: AccessLevel;
  /** The MCP tool that offers the same call (the spec's nine and the reads agents need beside them), if any. */
  tool?: string;
  /** One line on what it answers: for /.well-known/x402, the 402 terms and the MCP tools. */
  description: string;
  /** Price per call without a key (x402); empty when free. */
  prices: PriceTier[];
  /** Only in the full edition (research, lab). */
  fullEditionOnly?: boolean;
  /** lab run: the price is the quoted price of the depth minus what the quote cost. */
  pricedByQuote?: boolean;
  /** A batch (symbols=Fe,Ni,Co): the price is per symbol asked for, times the symbols. */
  perSymbol?: boolean;
  /**
   * An Atom feed or an embedded badge: its caller is a feed reader or an <img> tag, which sends no
   * header, so a closed one takes a feed token in its URL (token=) instead of the bearer (feedLevel).
   */
  feed?: boolean;
}

/** One element's history; a batch of histories costs this per symbol. An element's changes cost the same. */
export const ELEMENT_HISTORY_USD = 0.05;
/** A topic's or keyword's history; their changes, and the list of changes, cost the same. */
const SUBJECT_HISTORY_USD = 0.1;

/** What a lab quote itself costs (the price of the lab quote operations). */
/** An amount of money as people read prices: two decimals (0.10 USD), more only where it has them. */
export function usdText(usd: number): string {
  const two = usd.toFixed(2);
  return `${Number(two) === usd ? two : String(usd)} USD`;
}

export const LAB_QUOTE_USD = 0.01;

/**
 * One whole-table export file (all elements or all topics and keywords, scores or yearly history,
 * Parquet or gzip CSV) of a data version, bought per file without a key. No more than 1 USD: the
 * x402 reference client refuses a payment above that unless its user raises its spending cap
 * (spendControls.maxAmountPerPayment), and a file an agent cannot buy as it stands is not for sale.
 */
export const EXPORT_FILE_USD = 1;

/** A list of top papers (an element's or a subject's): up to 20, and up to 100, priced apart. */
const PAPERS_PRICES: PriceTier[] = [
  { upToPapers: 20, usd: 0.02 },
  { upToPapers: 100, usd: 0.1 },
];

export const OPERATIONS = [
  {
    id: 'listElements',
    tool: 'list_elements',
    description: 'All 118 elements with RI and RIS (HRI from Personal)',
    method: 'GET',
    path: '/elements',
    access: 'public',
    prices: [],
  },
  {
    id: 'getElement',
    tool: 'get_element_ri',
    description: "One element's RI, RIS and HRI",
    method: 'GET',
    path: '/elements/{symbol}',
    access: 'public',
    prices: [],
  },
  {
    id: 'getElementHistory',
    tool: 'get_element_history',
    description:
      "An element's full history of RIS and HRI (yearly; monthly from Personal; daily from Professional)",
    method: 'GET',
    path: '/elements/{symbol}/history',
    access: 'key',
    prices: [{ usd: ELEMENT_HISTORY_USD }],
  },
  {
    id: 'getElementHistories',
    tool: 'get_element_histories',
    // Priced per symbol (perSymbol): each door states it beside the price.
    description: 'The full histories of several elements in one call (symbols=Fe,Ni,Co)',
    method: 'GET',
    path: '/elements/history',
    access: 'key',
    prices: [{ usd: ELEMENT_HISTORY_USD }],
    perSymbol: true,
  },
  {
    id: 'getElementPapers',
    tool: 'get_element_papers',
    description: "An element's top papers (at most 100 ranked), by impact, newest or most cited",
    method: 'GET',
    path: '/elements/{symbol}/papers',
    access: 'personal',
    prices: PAPERS_PRICES,
  },
  {
    id: 'listVersions',
    tool: 'list_versions',
    description: 'The data versions kept, each answerable with data_version= or RI-Data-Version',
    method: 'GET',
    path: '/versions',
    access: 'public',
    prices: [],
  },
  {
    id: 'listExports',
    description:
      'The whole-table export files of each kept data version (elements and subjects, scores and yearly history, Parquet and gzip CSV) with their size and sha256',
    method: 'GET',
    path: '/exports',
    access: 'public',
    prices: [],
  },
  {
    id: 'getExportFile',
    description:
      'One whole-table export file of a data version, priced per file; a Range request resumes a download',
    method: 'GET',
    path: '/exports/{data_version}/{file}',
    access: 'professional',
    prices: [{ usd: EXPORT_FILE_USD }],
  },
  {
    id: 'listChanges',
    tool: 'get_changes',
    // Its plan is raised by the kinds asked for (KIND_ACCESS): topics and keywords from Personal.
    description:
      'What moved per subject at each publication since a data version: RI, RIS, HRI and rank before and after, communities turning rising, new subjects',
    method: 'GET',
    path: '/changes',
    access: 'key',
    prices: [{ usd: SUBJECT_HISTORY_USD }],
  },
  {
    id: 'getElementChanges',
    tool: 'get_changes',
    description: 'What moved of one element at each publication kept (RI, RIS, HRI, rank)',
    method: 'GET',
    path: '/elements/{symbol}/changes',
    access: 'key',
    prices: [{ usd: ELEMENT_HISTORY_USD }],
  },
  {
    id: 'getElementFeed',
    description: "An Atom feed of one element's changes, an entry per publication",
    method: 'GET',
    path: '/feeds/elements/{symbol}',
    access: 'public',
    prices: [],
    feed: true,
  },
  {
    id: 'getSubjectFeed',
    description: "An Atom feed of one topic's or keyword's changes, an entry per publication",
    method: 'GET',
    path: '/feeds/subjects/{subject_type}/{subject_id}',
    access: 'personal',
    prices: [],
    feed: true,
  },
  {
    id: 'getSubjectSetFeed',
    // Its plan is that of the kinds listed (feedLevel): open for elements alone.
    description: 'An Atom feed of the changes of a set of subjects named in its URL (subjects=)',
    method: 'GET',
    path: '/feeds/subjects',
    access: 'public',
    prices: [],
    feed: true,
  },
  {
    id: 'getRisingFeed',
    // Its plan is that of its kind (feedLevel): open for elements.
    description: 'An Atom feed of the subjects of one kind that rose most at each publication',
    method: 'GET',
    path: '/feeds/rising',
    access: 'public',
    prices: [],
    feed: true,
  },
  {
    id: 'getElementBadge',
    description: "An SVG badge of one element's current RIS, its data version in its title, to embed",
    method: 'GET',
    path: '/badges/elements/{symbol}.svg',
    access: 'public',
    prices: [],
    feed: true,
  },
  {
    // The plan of the yearly history it draws (getElementHistory): any key's feed token.
    id: 'getElementHistoryBadge',
    description: "An SVG sparkline of one element's yearly RIS, to embed",
    method: 'GET',
    path: '/badges/elements/{symbol}/history.svg',
    access: 'key',
    prices: [],
    feed: true,
  },
  {
    id: 'getSubjectBadge',
    description:
      "An SVG badge of one topic's or keyword's current RIS, its data version in its title, to embed",
    method: 'GET',
    path: '/badges/subjects/{subject_type}/{subject_id}.svg',
    access: 'personal',
    prices: [],
    feed: true,
  },
  {
    id: 'getSubjectHistoryBadge',
    description: "An SVG sparkline of one topic's or keyword's yearly RIS, to embed",
    method: 'GET',
    path: '/badges/subjects/{subject_type}/{subject_id}/history.svg',
    access: 'personal',
    prices: [],
    feed: true,
  },
  {
    id: 'searchSubjects',
    tool: 'search_subjects',
    description: 'Resolves free text to topics and keywords (subject_type and subject_id)',
    method: 'GET',
    path: '/subjects/search',
    access: 'key',
    prices: [{ usd: 0.01 }],
  },
  {
    id: 'getSubject',
    tool: 'get_subject_ri',
    description: "A topic's or keyword's RI, RIS, HRI and paper count",
    method: 'GET',
    path: '/subjects/{subject_type}/{subject_id}',
    access: 'personal',
    prices: [{ usd: 0.01 }],
  },
  {
    id: 'getSubjectHistory',
    tool: 'get_subject_history',
    description: "A topic's or keyword's full history (yearly or monthly)",
    method: 'GET',
    path: '/subjects/{subject_type}/{subject_id}/history',
    access: 'personal',
    prices: [{ usd: SUBJECT_HISTORY_USD }],
  },
  {
    id: 'getSubjectChanges',
    tool: 'get_changes',
    description: 'What moved of one topic or keyword at each publication kept (RI, RIS, HRI, rank, rising)',
    method: 'GET',
    path: '/subjects/{subject_type}/{subject_id}/changes',
    access: 'personal',
    prices: [{ usd: SUBJECT_HISTORY_USD }],
  },
  {
    id: 'getSubjectElements',
    tool: 'get_subject_elements',
    description: 'The top 10 elements a topic or keyword is routed to',
    method: 'GET',
    path: '/subjects/{subject_type}/{subject_id}/elements',
    access: 'personal',
    prices: [{ usd: 0.1 }],
  },
  {
    id: 'getSubjectPapers',
    tool: 'get_subject_papers',
    description: "A topic's or keyword's top papers (at most 100 ranked)",
    method: 'GET',
    path: '/subjects/{subject_type}/{subject_id}/papers',
    access: 'personal',
    prices: PAPERS_PRICES,
  },
  {
    id: 'research',
    tool: 'research',
    description: 'A question or a paper -> research communities and three reading lists (one page)',
    method: 'GET',
    path: '/research',
    access: 'personal',
    prices: [{ usd: 0.05 }],
    fullEditionOnly: true,
  },
  {
    id: 'labQuote',
    tool: 'lab_quote',
    description: 'A binding quote for a lab filter query: matches, years, communities, prices',
    method: 'GET',
    path: '/lab/quote',
    access: 'professional',
    prices: [{ usd: LAB_QUOTE_USD }],
    fullEditionOnly: true,
  },
  {
    id: 'labQuotePost',
    description: 'The same quote, with the query (or a markdown text with a query block) in a JSON body',
    method: 'POST',
    path: '/lab/quote',
    access: 'professional',
    prices: [{ usd: LAB_QUOTE_USD }],
    fullEditionOnly: true,
  },
  {
    id: 'labRun',
    tool: 'lab_run',
    description: 'The top papers of a quoted lab query, ranked by impact',
    method: 'GET',
    path: '/lab/run',
    access: 'professional',
    prices: [],
    fullEditionOnly: true,
    pricedByQuote: true,
  },
  {
    id: 'labRunPost',
    description: 'The same run, with the quote_id or the whole quote in a JSON body',
    method: 'POST',
    path: '/lab/run',
    access: 'professional',
    prices: [],
    fullEditionOnly: true,
    pricedByQuote: true,
  },
] as const satisfies readonly Operation[];

export type OperationId = (typeof OPERATIONS)[number]['id'];

export function operation(id: OperationId): Operation {
  return OPERATIONS.find((o) => o.id === id)!;
}

/** The plans of an edition, lowest first; a higher plan includes everything of a lower one. */
export function planLadder(edition: Edition): Plan[] {
  return edition === 'enterprise' ? ['free', 'enterprise'] : ['free', 'personal', 'professional'];
}

/** The plan a tier needs in an edition (the older edition has one gated plan, Enterprise). */
export function requiredPlan(level: 'personal' | 'professional', edition: Edition): Plan {
  return edition === 'enterprise' ? 'enterprise' : level;
}

/** Whether a key's plan reaches a tier. A plan from the other edition counts as its nearest tier. */
export function planAllows(plan: Plan, level: AccessLevel, edition: Edition): boolean {
  if (level === 'public' || level === 'key') return true;
  const rank = (p: Plan) => {
    if (edition === 'enterprise') return p === 'free' ? 0 : 2;
    return { free: 0, personal: 1, professional: 2, enterprise: 2 }[p];
  };
  const need = edition === 'enterprise' ? 2 : level === 'personal' ? 1 : 2;
  return rank(plan) >= need;
}

/** Whether an operation has a per-call price (a fixed one, tiers, or the quote's). */
export function isPriced(op: Operation): boolean {
  return op.prices.length > 0 || op.pricedByQuote === true;
}

/**
 * Whether a call goes on as a per-call payer (with payments on): no key, or a payment sent with a
 * key whose plan does not cover the call. A key whose plan covers it never pays.
 */
export function goesAsPayer(
  op: Operation,
  plan: Plan | null,
  edition: Edition,
  paymentSent: boolean,
  terms?: RequestTerms | null,
): boolean {
  return (
    isPriced(op) && (plan === null || (paymentSent && !planAllows(plan, requestLevel(op, terms), edition)))
  );
}

/**
 * What one exact request needs: the operation's level, raised by the history resolution it asks
 * for (monthly Personal, daily Professional) and by the kinds of subject whose changes it lists
 * (topics and keywords Personal: KIND_ACCESS).
 */
export function requestLevel(op: Operation, terms?: RequestTerms | null): AccessLevel {
  const { resolution, kinds = [] } = terms ?? {};
  const levels: AccessLevel[] = [op.access];
  if (resolution !== undefined && Object.hasOwn(RESOLUTION_ACCESS, resolution))
    levels.push(RESOLUTION_ACCESS[resolution]);
  for (const kind of kinds) if (Object.hasOwn(KIND_ACCESS, kind)) levels.push(KIND_ACCESS[kind as Kind]);
  for (const level of ['professional', 'personal', 'key', 'public'] as const)
    if (levels.includes(level)) return level;
  return op.access;
}

/** What of a request raised its level above its operation's, as a refusal names it ("resolution monthly"). */
export function raisedBy(op: Operation, terms?: RequestTerms | null): string | null {
  if (requestLevel(op, terms) === op.access) return null;
  const { resolution, kinds } = terms ?? {};
  if (resolution !== undefined && requestLevel(op, { resolution }) !== op.access)
    return `resolution ${resolution}`;
  return `kind ${(kinds ?? []).join(',')}`;
}

/** The kinds of subject (subject types), as the changes take them. */
export const KINDS = ['element', 'topic', 'keyword'] as const;
export type Kind = (typeof KINDS)[number];

/**
 * Who may read the changes of each kind of subject: as the subject's own reads (an element's with
 * any key, as its history; a topic's or keyword's from Personal).
 */
const KIND_ACCESS: Record<Kind, AccessLevel> = {
  element: 'key',
  topic: 'personal',
  keyword: 'personal',
};

/** Who may read the changes of a kind of subject, so follow them by webhook (KIND_ACCESS). */
export function changesLevel(kind: Kind): AccessLevel {
  return KIND_ACCESS[kind];
}

/**
 * Webhook subscriptions an account may hold, by its plan (stated on /pricing). Free keys poll
 * /v1/changes or read the feeds; a subscription is a standing job for the service.
 */
export const PLAN_WEBHOOK_SUBSCRIPTIONS: Record<Plan, number> = {
  free: 0,
  personal: 3,
  professional: 20,
  enterprise: 20,
};

/**
 * Who may read a feed of changes of these kinds: who may read the changes themselves
 * (KIND_ACCESS), except that what any key reads is open, since a feed reader sends no key. Above
 * that, a feed takes a feed token of an account whose plan reads it (docs/feeds.md).
 */
export function feedLevel(kinds: readonly Kind[]): AccessLevel {
  const levels = kinds.map((k) => KIND_ACCESS[k]);
  if (levels.includes('professional')) return 'professional';
  return levels.includes('personal') ? 'personal' : 'public';
}

/**
 * The rule of what a per-call payment buys, for every endpoint and tool: the call is answered as
 * the lowest plan that may make that exact request (a monthly history as Personal, a daily one as
 * Professional), at the endpoint's price. Stated on /pricing and in /.well-known/x402.
 */
export const PAID_CALL_RULE =
  "A per-call payment answers as the lowest plan that may make that exact request, at the endpoint's price: a yearly element history as any key (HRI not shown), a monthly one as Personal (HRI shown), a daily one as Professional; an element's changes as any key, those of topics and keywords as Personal; topic and keyword data, paper lists and research as Personal; the lab and export files as Professional.";

/** The plan a per-call payment stands for, for that call only (REST and MCP): PAID_CALL_RULE. */
export function payerPlan(op: Operation, edition: Edition, terms?: RequestTerms | null): Plan {
  const level = requestLevel(op, terms);
  if (level === 'professional') return 'professional';
  return level === 'personal' && edition === 'full' ? 'personal' : 'free';
}

/** The price in USD of a batch of `symbols` symbols: the per-symbol price times the symbols. */
export function batchPrice(op: Operation, symbols: number): number | null {
  const each = priceOf(op);
  return each === null ? null : Math.round(each * symbols * 1e6) / 1e6;
}

/**
 * What of one request its level and price read: the history resolution (which can raise the plan
 * it needs) and the paper limit (the paper tiers), as the request's own parameter schema parsed
 * them (contracts/), never the raw text.
 */
export interface RequestTerms {
  resolution?: Resolution | undefined;
  limit?: number | undefined;
  /** The kinds of subject whose changes are asked for (the changes list's kind). */
  kinds?: readonly string[] | undefined;
}

/** Price in USD of a call that asks for `papers` papers (paper routes price by the limit tier). */
export function priceOf(op: Operation, papers?: number): number | null {
  if (op.prices.length === 0) return null;
  const tier = op.prices.find(
    (t) => t.upToPapers === undefined || papers === undefined || papers <= t.upToPapers,
  );
  return (tier ?? op.prices[op.prices.length - 1]!).usd;
}

/** Who may ask for each history resolution: yearly any key, monthly Personal, daily Professional (elements only). */
export const RESOLUTION_ACCESS: Record<Resolution, AccessLevel> = {
  yearly: 'key',
  monthly: 'personal',
  daily: 'professional',
};

/**
 * Requests per minute each API key may make, by its account's plan (a higher plan buys a larger
 * budget). RATE_LIMIT_PER_KEY, when set, applies to every plan instead.
 */
export const PLAN_RATE_LIMITS: Record<Plan, number> = {
  free: 120,
  personal: 600,
  professional: 1_200,
  enterprise: 1_200,
};

/** HRI is shown from the Personal plan up. */
export const HRI_ACCESS: AccessLevel = 'personal';

/**
 * The lab's deliverables: the top papers of the quoted query, ranked by impact. The quote binds
 * these prices; lab run charges the price minus the LAB_QUOTE_USD already paid for the quote.
 */
export const LAB_DEPTHS = {
  papers_20: { papers: 20, usd: 0.05 },
  papers_100: { papers: 100, usd: 0.2 },
} as const;
export type LabDepth = keyof typeof LAB_DEPTHS;

/** Above this many matches, years and communities come from a fixed sample (flagged). */
export const LAB_SAMPLE_ABOVE = 2_000;
/** Above this many matches the packet is a licence offer, not a price. */
export const LAB_LICENCE_ABOVE = 100_000;
/** How long a quote binds its prices. */
export const LAB_QUOTE_TTL_SECONDS = 15 * 60;

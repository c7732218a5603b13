/**
 * Each REST operation's query, whole and strict (an unknown parameter is refused, naming it): the
 * route declares it (and so the OpenAPI document), and the price of a call reads the request as
 * it parses (`queryTerms`), so the two cannot read a query differently.
 */
import { z } from '@hono/zod-openapi';
import type { OperationId, RequestTerms } from '../access/policy.js';
import { BadgeTokenQuery } from './badges.js';
import { ChangesQuery, KindsQuery } from './changes.js';
import { FeedKindQuery, FeedSubjectsQuery, FeedTokenQuery } from './feeds.js';
import { LabQuoteText, LabRunFields, QuoteId } from './lab.js';
import {
  FormatQuery,
  HistoryRangeQuery,
  KeywordQuery,
  LimitQuery,
  PinnedQuery,
  ResolutionQuery,
  SortQuery,
  SubjectSearchText,
  SymbolsQuery,
} from './params.js';
import { researchFields } from './research.js';

export const QUERIES = {
  listElements: z.object({ symbols: SymbolsQuery.optional(), ...PinnedQuery, ...FormatQuery }).strict(),
  getElement: z.object(PinnedQuery).strict(),
  getElementHistory: z
    .object({ resolution: ResolutionQuery, ...HistoryRangeQuery, ...PinnedQuery, ...FormatQuery })
    .strict(),
  getElementHistories: z
    .object({
      symbols: SymbolsQuery,
      resolution: ResolutionQuery,
      ...HistoryRangeQuery,
      ...PinnedQuery,
      ...FormatQuery,
    })
    .strict(),
  getElementPapers: z
    .object({ keyword: KeywordQuery, sort: SortQuery, limit: LimitQuery, ...PinnedQuery, ...FormatQuery })
    .strict(),
  searchSubjects: z.object({ q: SubjectSearchText, ...PinnedQuery }).strict(),
  getSubject: z.object(PinnedQuery).strict(),
  getSubjectHistory: z
    .object({ resolution: ResolutionQuery, ...HistoryRangeQuery, ...PinnedQuery, ...FormatQuery })
    .strict(),
  getSubjectElements: z.object(PinnedQuery).strict(),
  getSubjectPapers: z.object({ sort: SortQuery, limit: LimitQuery, ...PinnedQuery, ...FormatQuery }).strict(),
  listVersions: z.object({}).strict(),
  listExports: z.object(PinnedQuery).strict(),
  getExportFile: z.object({}).strict(),
  listChanges: z.object({ kind: KindsQuery, ...ChangesQuery, ...PinnedQuery }).strict(),
  getElementChanges: z.object({ ...ChangesQuery, ...PinnedQuery }).strict(),
  getSubjectChanges: z.object({ ...ChangesQuery, ...PinnedQuery }).strict(),
  getElementFeed: z.object({ ...FeedTokenQuery, ...PinnedQuery }).strict(),
  getSubjectFeed: z.object({ ...FeedTokenQuery, ...PinnedQuery }).strict(),
  getSubjectSetFeed: z.object({ subjects: FeedSubjectsQuery, ...FeedTokenQuery, ...PinnedQuery }).strict(),
  getRisingFeed: z.object({ kind: FeedKindQuery, ...FeedTokenQuery, ...PinnedQuery }).strict(),
  getElementBadge: z.object({ ...BadgeTokenQuery, ...PinnedQuery }).strict(),
  getElementHistoryBadge: z.object({ ...BadgeTokenQuery, ...PinnedQuery }).strict(),
  getSubjectBadge: z.object({ ...BadgeTokenQuery, ...PinnedQuery }).strict(),
  getSubjectHistoryBadge: z.object({ ...BadgeTokenQuery, ...PinnedQuery }).strict(),
  research: z.object({ ...researchFields(), ...PinnedQuery }).strict(),
  labQuote: z.object({ q: LabQuoteText }).strict(),
  labRun: z.object({ quote_id: QuoteId, depth: LabRunFields.depth }).strict(),
} satisfies Partial<Record<OperationId, z.ZodObject>>;

/** The terms of a request (its resolution and paper limit) from its parameters as parsed, by a route or a tool. */
export function termsOf(params: Record<string, unknown>): RequestTerms {
  const { resolution, limit } = params as RequestTerms;
  const { kind } = params as { kind?: readonly string[] | string };
  // A feed's kind is one (kind=topic); the changes list's a list.
  return { resolution, limit, ...(kind ? { kinds: typeof kind === 'string' ? [kind] : kind } : {}) };
}

/**
 * The terms of a REST request, from its query as its operation's schema parses it; null when it
 * does not parse (the route refuses it as invalid, so no price is quoted for it). An operation
 * with no query (a POST's body) has no terms in it.
 */
export function queryTerms(id: string, query: Record<string, unknown>): RequestTerms | null {
  const schema = (QUERIES as Partial<Record<string, z.ZodObject>>)[id];
  if (!schema) return {};
  const parsed = schema.safeParse(query);
  return parsed.success ? termsOf(parsed.data) : null;
}

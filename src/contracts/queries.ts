/**
 * Each REST operation's query, whole and strict (an unknown parameter is refused, naming it): the
 * route declares it (and so the OpenAPI document), and the price of a call reads the request as
 * it parses (`requestTerms`), so the two cannot read a query differently.
 */
import { z } from '@hono/zod-openapi';
import type { OperationId } from '../access/policy.js';
import { LabQuoteText, LabRunFields, QuoteId } from './lab.js';
import {
  FormatQuery,
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
  getElementHistory: z.object({ resolution: ResolutionQuery, ...PinnedQuery, ...FormatQuery }).strict(),
  getElementHistories: z
    .object({ symbols: SymbolsQuery, resolution: ResolutionQuery, ...PinnedQuery, ...FormatQuery })
    .strict(),
  getElementPapers: z
    .object({ keyword: KeywordQuery, sort: SortQuery, limit: LimitQuery, ...PinnedQuery, ...FormatQuery })
    .strict(),
  searchSubjects: z.object({ q: SubjectSearchText, ...PinnedQuery }).strict(),
  getSubject: z.object(PinnedQuery).strict(),
  getSubjectHistory: z.object({ resolution: ResolutionQuery, ...PinnedQuery, ...FormatQuery }).strict(),
  getSubjectElements: z.object(PinnedQuery).strict(),
  getSubjectPapers: z.object({ sort: SortQuery, limit: LimitQuery, ...PinnedQuery, ...FormatQuery }).strict(),
  listVersions: z.object({}).strict(),
  research: z.object({ ...researchFields(z.coerce.number), ...PinnedQuery }).strict(),
  labQuote: z.object({ q: LabQuoteText }).strict(),
  labRun: z.object({ quote_id: QuoteId, depth: LabRunFields.depth }).strict(),
} satisfies Partial<Record<OperationId, z.ZodObject>>;

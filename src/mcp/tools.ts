import { z } from '@hono/zod-openapi';
import { batchPrice, LAB_QUOTE_USD, type LabDepth, type OperationId, operation } from '../access/policy.js';
import {
  ElementHistoriesSchema,
  ElementHistorySchema,
  ElementListSchema,
  ElementPapersSchema,
  ElementSchema,
  SymbolsQuery,
} from '../contracts/elements.js';
import { LAB_DEPTH_NAMES, LabQuoteSchema, LabRunSchema } from '../contracts/lab.js';
import { type ResearchAnswer, ResearchSchema } from '../contracts/research.js';
import {
  SubjectElementsSchema,
  SubjectHistorySchema,
  SubjectPapersSchema,
  SubjectSchema,
  SubjectSearchSchema,
} from '../contracts/subjects.js';
import { VersionsSchema } from '../contracts/versions.js';
import { batchSymbols, canonicalSymbol, getElement, listElements } from '../core/elements.js';
import { ServiceError } from '../core/errors.js';
import { elementHistories, elementHistory, MAX_HISTORY_BATCH, subjectHistory } from '../core/history.js';
import type { LabService } from '../core/lab-service.js';
import { elementPapers, subjectPapers } from '../core/papers.js';
import { researchPage } from '../core/research.js';
import { getSubject, searchSubjects, subjectElements } from '../core/subjects.js';
import { listVersions } from '../core/versions.js';
import type { Viewer } from '../core/viewer.js';
import { LabQuoteFields, labQuoteInput } from '../http/routes/lab/quote.js';
import { LabRunFields, labRunRequest } from '../http/routes/lab/run.js';
import { researchFields, researchRequest } from '../http/routes/research/get.js';
import {
  DataVersionQuery,
  KeywordQuery,
  LimitQuery,
  ResolutionQuery,
  SubjectParams,
  SubjectSearchText,
  SymbolParam,
} from '../http/routes/shared.js';
import type { HeavyWork } from '../offload/heavy-work.js';
import type { Snapshot } from '../snapshot/snapshot.js';

/** What a tool runs with: the snapshot of this call, the caller's view, the lab, and the payment hook. */
export interface ToolContext {
  snapshot: Snapshot;
  viewer: Viewer;
  lab: LabService;
  /** Where research is computed (the same pool as REST). */
  heavy: HeavyWork;
  /** The folder of published snapshots (the versions kept). */
  snapshotDir: string;
  /** Once the call is known to be answerable: asks for (or checks) payment; a no-op on a plan that covers it. */
  charge(usd?: number): Promise<void>;
}

export interface ToolDef {
  name: string;
  op: OperationId;
  /** A tool that changes state (stores a quote, runs a paid deliverable): not read-only, not idempotent. */
  writes?: boolean;
  description: string;
  input: z.ZodObject;
  output: z.ZodType;
  run(ctx: ToolContext, args: Record<string, unknown>): Promise<unknown>;
}

const READING =
  ' RI is a share of research output (papers per 10,000), not quality; RIS (0-100) compares subjects of one type within one data_version only; HRI is the share among high-impact papers (null below the Personal plan). Cite canonical_url; read notes.';

const PAPERS =
  ' Papers are ranked by rank (citation impact, young papers projected); at most 100 per subject are ranked. ris_contribution is a weight toward RIS, NOT importance: never sort by it. Abstracts are never returned; the DOI points to the source.';

const SUBJECT_HINT =
  ' subject_type is topic (subject_id like T10030) or keyword (its slug); find them with search_subjects.';

/** In a read tool's input, as on the REST reads: the server answers the call from that data version. */
const PINNED = {
  data_version: DataVersionQuery.describe(
    "Answer from this data version (an earlier answer's data_version) while it is kept; omit for the current data",
  ),
};

/** Resolutions of a subject's history (daily is for elements only). */
const SubjectResolution = z
  .enum(['yearly', 'monthly'])
  .default('yearly')
  .describe('yearly (default) or monthly (both need the Personal plan, as every subject read)');

/** Paper sorts as an agent should choose them (REST also takes ris as an alias of impact). */
const PaperSort = z
  .enum(['impact', 'newest', 'foundational'])
  .default('impact')
  .describe('impact (default), newest, foundational (most cited first)');

/** The spec's nine tools and the reads an agent needs beside them: each is the REST operation of the same name in the price table, over the same core. */
export function toolDefinitions(): ToolDef[] {
  const d = (id: OperationId) => operation(id).description;
  return [
    {
      name: 'research',
      op: 'research',
      description: `${d('research')}. Ask a question (q) or start from a paper (a DOI or title): returns the research communities and element sub-communities it is about (each with why it matched and whether it is rising) and three reading lists: foundational (classics the question's papers cite most), now (highest impact, young papers projected) and newest (last two years). Each page is one call; pages says how many the answer has (1-5) and next gives the following page and its price; a page past the last is refused (page_out_of_range, with pages) and never charged.${READING}`,
      input: z.object({ ...researchFields(z.number), ...PINNED }).strict(),
      output: ResearchSchema,
      async run(ctx, a) {
        const request = researchRequest(a as Parameters<typeof researchRequest>[0]);
        // Costly: paid before it is computed, as on REST (researchPage: a page past the last is
        // refused first; a question nothing matches is then not charged).
        return researchPage(
          ctx.snapshot,
          request,
          () => ctx.charge(),
          () =>
            ctx.heavy.run<ResearchAnswer>(ctx.snapshot, { kind: 'research', request, viewer: ctx.viewer }),
        );
      },
    },
    {
      name: 'get_element_ri',
      op: 'getElement',
      description: `${d('getElement')} (symbol in any case: Fe, fe). Free, no key needed.${READING}`,
      input: SymbolParam.extend(PINNED).strict(),
      output: ElementSchema,
      run: async (ctx, a) => getElement(ctx.snapshot, a.symbol as string, ctx.viewer),
    },
    {
      name: 'search_subjects',
      op: 'searchSubjects',
      description: `${d('searchSubjects')}: use it to find the subject_type and subject_id the subject tools take.`,
      input: z
        .object({
          q: SubjectSearchText,
          ...PINNED,
        })
        .strict(),
      output: SubjectSearchSchema,
      run: async (ctx, a) => paid(ctx, searchSubjects(ctx.snapshot, a.q as string, ctx.viewer)),
    },
    {
      name: 'get_subject_ri',
      op: 'getSubject',
      description: `${d('getSubject')}.${SUBJECT_HINT}${READING}`,
      input: SubjectParams.extend(PINNED).strict(),
      output: SubjectSchema,
      run: async (ctx, a) =>
        paid(ctx, getSubject(ctx.snapshot, a.subject_type as 'topic', a.subject_id as string, ctx.viewer)),
    },
    {
      name: 'get_subject_history',
      op: 'getSubjectHistory',
      description: `${d('getSubjectHistory')}.${SUBJECT_HINT} resolution: yearly (default) or monthly.${READING}`,
      input: SubjectParams.extend({ resolution: SubjectResolution, ...PINNED }).strict(),
      output: SubjectHistorySchema,
      async run(ctx, a) {
        // Daily is refused by the core (elements only), with the same problem as REST's.
        const answer = subjectHistory(
          ctx.snapshot,
          a.subject_type as 'topic',
          a.subject_id as string,
          a.resolution as 'yearly',
          ctx.viewer,
        );
        return paid(ctx, answer);
      },
    },
    {
      name: 'get_subject_papers',
      op: 'getSubjectPapers',
      description: `${d('getSubjectPapers')}.${SUBJECT_HINT} sort: impact (default), newest, foundational (most cited); limit 1-100 (default 20; up to 20 and up to 100 are priced apart).${PAPERS}`,
      input: SubjectParams.extend({ sort: PaperSort, limit: LimitQuery, ...PINNED }).strict(),
      output: SubjectPapersSchema,
      run: async (ctx, a) =>
        paid(
          ctx,
          subjectPapers(
            ctx.snapshot,
            a.subject_type as 'topic',
            a.subject_id as string,
            { sort: a.sort as 'impact', limit: a.limit as number },
            ctx.viewer,
          ),
        ),
    },
    {
      name: 'get_element_papers',
      op: 'getElementPapers',
      description: `${d('getElementPapers')}. keyword narrows to the ranked papers with that keyword (total_ranked then counts those); sort: impact (default), newest, foundational (most cited); limit 1-100 (default 20).${PAPERS}`,
      input: SymbolParam.extend({
        keyword: KeywordQuery,
        sort: PaperSort,
        limit: LimitQuery,
        ...PINNED,
      }).strict(),
      output: ElementPapersSchema,
      run: async (ctx, a) =>
        paid(
          ctx,
          elementPapers(
            ctx.snapshot,
            a.symbol as string,
            {
              sort: a.sort as 'impact',
              limit: a.limit as number,
              ...(a.keyword ? { keyword: a.keyword as string } : {}),
            },
            ctx.viewer,
          ),
        ),
    },
    {
      name: 'lab_quote',
      op: 'labQuote',
      writes: true,
      description: `${d('labQuote')}. Give the filter as q (or query, or markdown whose \`\`\`query block holds it). The filter language: Fe or +Fe (required), -Pt (excluded), (Ni OR Co), "exact topic name", electro* (up to 25 topic names), year:2020..2024, year:2020.., year:2024. Terms are element symbols (case-sensitive) or names, topic and keyword names. Terms it does not know are listed under ignored, never dropped silently. deliverables lists the depths offered, each with the papers it delivers (papers_100 only when it delivers more than papers_20); not_offered says which are not, and why. Then call lab_run with the quote_id.`,
      // q as GET /v1/lab/quote takes it, query or markdown as POST does: exactly one of the three.
      input: z
        .object({
          q: LabQuoteFields.query.describe(
            'The filter, as GET /v1/lab/quote?q= takes it (or give query, or markdown)',
          ),
          ...LabQuoteFields,
        })
        .strict(),
      output: LabQuoteSchema,
      async run(ctx, a) {
        const { q, query, markdown } = a as { q?: string; query?: string; markdown?: string };
        if (q !== undefined && query !== undefined)
          throw new ServiceError(
            'invalid_parameter',
            "Give the filter once: 'q' or 'query' (or 'markdown').",
            {
              parameter: 'q',
            },
          );
        const input = labQuoteInput({ query: q ?? query, markdown });
        return ctx.lab.quote(ctx.snapshot, input, ctx.viewer, { pay: () => ctx.charge() });
      },
    },
    {
      name: 'lab_run',
      op: 'labRun',
      writes: true,
      description: `${d('labRun')}: ${LAB_DEPTH_NAMES}, at the quoted price minus the ${LAB_QUOTE_USD} USD the quote cost. An expired, edited or stale quote (the data changed) is refused before any payment; ask lab_quote again. A depth the quote does not offer is refused too (depth_not_offered, naming those it offers).${PAPERS}`,
      input: z.object(LabRunFields).strict(),
      output: LabRunSchema,
      async run(ctx, a) {
        const request = labRunRequest(a as Parameters<typeof labRunRequest>[0]);
        const depth = a.depth as LabDepth;
        return ctx.lab.run(ctx.snapshot, request, depth, ctx.viewer, (usd) => ctx.charge(usd));
      },
    },
    {
      name: 'list_elements',
      op: 'listElements',
      description: `${d('listElements')}; symbols (Fe,Ni,Co) gives only those, in that order.${READING}`,
      input: z.object({ symbols: SymbolsQuery.optional(), ...PINNED }).strict(),
      output: ElementListSchema,
      run: async (ctx, a) =>
        listElements(ctx.snapshot, ctx.viewer, a.symbols ? batchSymbols(a.symbols as string) : undefined),
    },
    {
      name: 'get_element_history',
      op: 'getElementHistory',
      description: `${d('getElementHistory')}. One value per period from the element's first paper to the corpus cut-off (the last period is incomplete). resolution: yearly (default, any key), monthly (Personal), daily (Professional).${READING}`,
      input: SymbolParam.extend({ resolution: ResolutionQuery, ...PINNED }).strict(),
      output: ElementHistorySchema,
      async run(ctx, a) {
        canonicalSymbol(a.symbol as string);
        await ctx.charge();
        return elementHistory(ctx.snapshot, a.symbol as string, a.resolution as 'yearly', ctx.viewer);
      },
    },
    {
      name: 'get_element_histories',
      op: 'getElementHistories',
      description: `${d('getElementHistories')}: symbols (Fe,Ni,Co), at most ${MAX_HISTORY_BATCH}; resolution as get_element_history.${READING}`,
      input: z.object({ symbols: SymbolsQuery, resolution: ResolutionQuery, ...PINNED }).strict(),
      output: ElementHistoriesSchema,
      async run(ctx, a) {
        const list = batchSymbols(a.symbols as string, MAX_HISTORY_BATCH);
        await ctx.charge(batchPrice(operation('getElementHistories'), list.length) ?? undefined);
        return elementHistories(ctx.snapshot, list, a.resolution as 'yearly', ctx.viewer);
      },
    },
    {
      name: 'list_versions',
      op: 'listVersions',
      description: `${d('listVersions')}: pass one as data_version to any read tool to get that data again (what an earlier answer said). Always today's list.`,
      input: z.object({}).strict(),
      output: VersionsSchema,
      run: async (ctx) => listVersions(ctx.snapshot, ctx.snapshotDir, ctx.viewer),
    },
    {
      name: 'get_subject_elements',
      op: 'getSubjectElements',
      description: `${d('getSubjectElements')}, each with its RI, RIS and HRI in the subject.${SUBJECT_HINT}${READING}`,
      input: SubjectParams.extend(PINNED).strict(),
      output: SubjectElementsSchema,
      run: async (ctx, a) =>
        paid(
          ctx,
          subjectElements(ctx.snapshot, a.subject_type as 'topic', a.subject_id as string, ctx.viewer),
        ),
    },
  ];
}

async function paid<T>(ctx: ToolContext, answer: T): Promise<T> {
  await ctx.charge();
  return answer;
}

import { z } from '@hono/zod-openapi';
import {
  batchPrice,
  KINDS,
  type Kind,
  type LabDepth,
  type OperationId,
  operation,
} from '../access/policy.js';
import { ChangesQuery, ChangesSchema, KindsArg, SubjectChangesSchema } from '../contracts/changes.js';
import {
  ElementHistoriesSchema,
  ElementHistorySchema,
  ElementListSchema,
  ElementPapersSchema,
  ElementSchema,
} from '../contracts/elements.js';
import {
  LAB_DEPTH_NAMES,
  LabQuoteFields,
  LabQuoteSchema,
  LabRunFields,
  LabRunSchema,
} from '../contracts/lab.js';
import {
  DataVersionQuery,
  HistoryRangeQuery,
  KeywordQuery,
  LimitQuery,
  ResolutionQuery,
  SortQuery,
  SubjectParams,
  SubjectResolutionArg,
  SubjectSearchText,
  SymbolParam,
  SymbolsQuery,
} from '../contracts/params.js';
import { ResearchSchema, researchFields } from '../contracts/research.js';
import { MAX_PAGES } from '../contracts/research-request.js';
import {
  SubjectElementsSchema,
  SubjectHistorySchema,
  SubjectPapersSchema,
  SubjectSchema,
  SubjectSearchSchema,
} from '../contracts/subjects.js';
import { VersionsSchema } from '../contracts/versions.js';
import { RESULT_TOKENS } from '../core/answer-size.js';
import { elementChanges, fitChanges, listChanges, subjectChanges } from '../core/changes.js';
import { batchSymbols, canonicalSymbol, getElement, listElements } from '../core/elements.js';
import { ServiceError } from '../core/errors.js';
import { requireExactlyOne } from '../core/exactly-one.js';
import {
  elementHistories,
  elementHistory,
  fitHistory,
  MAX_HISTORY_BATCH,
  subjectHistory,
} from '../core/history.js';
import { type HistoryRange, historyRange } from '../core/history-range.js';
import { labQuoteInput } from '../core/lab.js';
import { type LabService, labRunRequest } from '../core/lab-service.js';
import { elementPapers, fitPapers, subjectPapers } from '../core/papers.js';
import { researchPage, researchRequest } from '../core/research.js';
import { getSubject, searchSubjects, subjectElements } from '../core/subjects.js';
import { listVersions } from '../core/versions.js';
import type { Viewer } from '../core/viewer.js';
import type { WorkerPool } from '../core/worker-pool.js';
import type { ResearchJson, ResponseEnvelope } from '../core/worker-tasks.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import type { Encoding } from '../util/compression.js';

/** What a tool runs with: the snapshot of this call, the caller's view, the lab, and the payment hook. */
interface ToolContext {
  snapshot: Snapshot;
  viewer: Viewer;
  lab: LabService;
  /** Where research is computed (the same pool as REST). */
  workerPool: WorkerPool;
  /** The folder of published snapshots (the versions kept). */
  snapshotDir: string;
  /** Once the call is known to be answerable: asks for (or checks) payment; a no-op on a plan that covers it. */
  charge(usd?: number): Promise<void>;
  /** Whether the payment sent was already used: a retry (lab_run owes it the run it paid for). */
  paidBefore(): Promise<boolean>;
  /** The JSON-RPC response the result goes into, when the tool may write it compressed itself. */
  envelope?: ResponseEnvelope;
}

/** A tool result already written as JSON (structuredContent with its own notes, and the text). */
export class ResultJson {
  constructor(
    readonly json: string,
    /** It carries a payment's receipt in _meta. */
    readonly paid = false,
    /** The whole JSON-RPC response (the context's envelope), compressed; never with a receipt. */
    readonly response?: { body: Uint8Array; encoding: Encoding },
  ) {}
}

export interface ToolDef {
  name: string;
  op: OperationId;
  /** A tool that changes state (stores a quote, runs a paid deliverable): not read-only, not idempotent. */
  writes?: boolean;
  description: string;
  input: z.ZodObject;
  output: z.ZodType;
  /**
   * The REST operation a call is, when its arguments choose among several (get_changes: the list,
   * one element's or one subject's changes), with the arguments as that operation takes them: the
   * call needs that operation's plan and pays its price. Without it, `op` with the arguments as parsed.
   */
  route?(args: Record<string, unknown>): { op: OperationId; args: Record<string, unknown> };
  run(ctx: ToolContext, args: Record<string, unknown>): Promise<unknown>;
  /**
   * The result held to its size (the answer with only its own notes, as the model reads it): a
   * history keeps its most recent periods that fit, a paper list or a lab run its first papers,
   * and says how to get the rest.
   */
  fit?(answer: object, args: Record<string, unknown>, viewer: Viewer): object;
}

/** What the paper tools must not be misread as (the rest of the reading is in the server's instructions). */
const NOT_RIS = ' ris_contribution is a weight toward RIS, not importance: never rank by it.';

/** What the history tools say of their size (the instructions say how; bench/mcp-tokens.mjs measures it). */
const HISTORY_SIZE = ` About 16 tokens a period, ${RESULT_TOKENS.toLocaleString('en-US')} a result (the latest; the rest: notes.left_out).`;

/**
 * What the paper tools say of their size (bench/mcp-tokens.mjs: about 130 o200k tokens a paper of
 * the sample, whose titles the size's estimate counts high: some 60 fit). Short: the tool list has
 * a budget too, and the instructions say the rest.
 */
const PAPERS_SIZE = ' About 60 papers a result (the first; the rest: notes.left_out).';

/** A history tool's range, as the history routes take it (the same names and checks). */
const rangeOf = (a: Record<string, unknown>): HistoryRange => ({
  from: a.from as string | undefined,
  to: a.to as string | undefined,
  last: a.last as number | undefined,
});

/**
 * A history result held to its size (fitHistory), naming the REST URL of the whole answer: the
 * same operation with the same arguments, at the data version answered.
 */
function fitted(op: OperationId) {
  return (answer: object, args: Record<string, unknown>, viewer: Viewer) => {
    const history = answer as Parameters<typeof fitHistory>[0];
    const pinned = { ...args, data_version: history.data_version };
    return fitHistory(history, { args, url: restUrl(op, pinned, viewer.publicUrl) });
  };
}

/**
 * A paper list held to its size (fitPapers), naming the REST URL of the whole list (JSON or CSV):
 * the same operation with the same arguments, at the data version answered.
 */
function fittedPapers(op: OperationId) {
  return (answer: object, args: Record<string, unknown>, viewer: Viewer) => {
    const list = answer as Parameters<typeof fitPapers>[0] & { data_version: string };
    const url = restUrl(op, { ...args, data_version: list.data_version }, viewer.publicUrl);
    return fitPapers(list, `${url} (add &format=csv for CSV)`);
  };
}

/** The REST URL of an operation called with these arguments: path parameters in the path, the others in the query. */
function restUrl(op: OperationId, args: Record<string, unknown>, publicUrl: string): string {
  const inPath = new Set<string>();
  const path = operation(op).path.replace(/\{(\w+)\}/g, (_, name: string) => {
    inPath.add(name);
    return encodeURIComponent(String(args[name]));
  });
  const query = Object.entries(args)
    .filter(([name, value]) => !inPath.has(name) && value !== undefined)
    // A list of symbols stays readable (Fe,Ni,Co): a comma needs no escape in a query.
    .map(([name, value]) => `${name}=${encodeURIComponent(String(value)).replace(/%2C/g, ',')}`)
    .join('&');
  return `${publicUrl}/v1${path}${query ? `?${query}` : ''}`;
}

/** In a read tool's input, as on the REST reads: the server answers the call from that data version. */
const PINNED = {
  // What it is for is said once, in the server's instructions.
  data_version: DataVersionQuery,
};

/** The spec's nine tools and the reads an agent needs beside them: each is the REST operation of the same name in the price table, over the same core. */
export function toolDefinitions(): ToolDef[] {
  const d = (id: OperationId) => operation(id).description;
  return [
    {
      name: 'research',
      op: 'research',
      description: `${d('research')}: communities (and element sub-communities), why each matched, whether rising; lists foundational (most cited by the matches), now (highest impact), newest (last two years). Pages 1-${MAX_PAGES}: next.url's page and data_version give the next; past the last, refused uncharged.`,
      input: z
        .object({
          ...researchFields(),
          q: researchFields().q.describe('The question, e.g. "oxygen evolution nickel iron" (or paper)'),
          paper: researchFields().paper.describe('A DOI or title to start from (or q, not both)'),
          // The description says what a page past the last does.
          page: researchFields().page.describe(`Page 1-${MAX_PAGES}, up to the answer's pages`),
          ...PINNED,
        })
        .strict(),
      output: ResearchSchema,
      async run(ctx, a) {
        const request = researchRequest(a as Parameters<typeof researchRequest>[0]);
        // Costly: paid before it is computed, as on REST (researchPage: a page past the last is
        // refused first; a question nothing matches is then not charged).
        // The result is written where the answer is computed (a worker thread), so that only a
        // string crosses to this thread, as REST's answer does.
        // With the envelope, the worker also compresses the whole response (about 20 KB: it would
        // otherwise go to libuv's pool and back, a fifth of a millisecond).
        const envelope = ctx.envelope;
        const { json, body } = await researchPage(
          ctx.snapshot,
          request,
          () => ctx.charge(),
          () =>
            ctx.workerPool.run<ResearchJson>(ctx.snapshot, {
              kind: 'researchTool',
              request,
              viewer: ctx.viewer,
              ...(envelope ? { envelope } : {}),
            }),
        );
        return new ResultJson(
          json,
          false,
          body && envelope ? { body, encoding: envelope.encoding } : undefined,
        );
      },
    },
    {
      name: 'get_element_ri',
      op: 'getElement',
      description: `${d('getElement')} (symbol in any case).`,
      input: SymbolParam.extend(PINNED).strict(),
      output: ElementSchema,
      run: async (ctx, a) => getElement(ctx.snapshot, a.symbol as string, ctx.viewer),
    },
    {
      name: 'search_subjects',
      op: 'searchSubjects',
      description: `${d('searchSubjects')}, as the subject tools take them.`,
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
      description: `${d('getSubject')}.`,
      input: SubjectParams.extend(PINNED).strict(),
      output: SubjectSchema,
      run: async (ctx, a) =>
        paid(ctx, getSubject(ctx.snapshot, a.subject_type as 'topic', a.subject_id as string, ctx.viewer)),
    },
    {
      name: 'get_subject_history',
      op: 'getSubjectHistory',
      description: `${d('getSubjectHistory')}.${HISTORY_SIZE}`,
      input: SubjectParams.extend({
        resolution: SubjectResolutionArg,
        ...HistoryRangeQuery,
        ...PINNED,
      }).strict(),
      output: SubjectHistorySchema,
      async run(ctx, a) {
        // Daily is refused by the core (elements only), with the same problem as REST's.
        const answer = subjectHistory(
          ctx.snapshot,
          a.subject_type as 'topic',
          a.subject_id as string,
          a.resolution as 'yearly',
          ctx.viewer,
          rangeOf(a),
        );
        return paid(ctx, answer);
      },
      fit: fitted('getSubjectHistory'),
    },
    {
      name: 'get_subject_papers',
      op: 'getSubjectPapers',
      description: `${d('getSubjectPapers')}.${NOT_RIS}${PAPERS_SIZE}`,
      input: SubjectParams.extend({ sort: SortQuery, limit: LimitQuery, ...PINNED }).strict(),
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
      fit: fittedPapers('getSubjectPapers'),
    },
    {
      name: 'get_element_papers',
      op: 'getElementPapers',
      description: `${d('getElementPapers')}; keyword narrows them (total_ranked then counts those).${NOT_RIS}${PAPERS_SIZE}`,
      input: SymbolParam.extend({
        keyword: KeywordQuery,
        sort: SortQuery,
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
      fit: fittedPapers('getElementPapers'),
    },
    {
      name: 'lab_quote',
      op: 'labQuote',
      writes: true,
      description: `${d('labQuote')}. Terms: element symbols (case-sensitive) or names, topic and keyword names; unknown terms are listed under ignored. deliverables are the depths offered; then lab_run with the quote_id.`,
      // q as GET /v1/lab/quote takes it, query or markdown as POST does: exactly one of the three.
      input: z
        .object({
          q: LabQuoteFields.query.describe(
            'The filter: +Fe or Fe (required), -Pt (excluded), (Ni OR Co), "exact topic name", electro* (topic names), year:2020..2024. Exactly one of q, query, markdown',
          ),
          query: LabQuoteFields.query.describe("The filter, as q (POST's name for it)"),
          markdown: LabQuoteFields.markdown.describe(
            'A text whose ```query block holds the filter (instead of q)',
          ),
        })
        .strict(),
      output: LabQuoteSchema,
      async run(ctx, a) {
        const { q, query, markdown } = a as { q?: string; query?: string; markdown?: string };
        // The rule REST's two take, over this tool's three names (labQuoteInput then has one).
        requireExactlyOne({ q, query, markdown }, "'q', 'query' or 'markdown'");
        const input = labQuoteInput({ query: q ?? query, markdown });
        return ctx.lab.quote(ctx.snapshot, input, ctx.viewer, { pay: () => ctx.charge() });
      },
    },
    {
      name: 'lab_run',
      op: 'labRun',
      writes: true,
      description: `${d('labRun')}: ${LAB_DEPTH_NAMES}. An expired, edited or stale quote is refused before any payment (ask lab_quote again).${NOT_RIS}${PAPERS_SIZE}`,
      input: z
        .object({
          ...LabRunFields,
          quote_id: LabRunFields.quote_id.describe('The quote_id of a lab_quote answer (or quote, not both)'),
          quote: LabRunFields.quote.describe('The whole lab_quote answer (or quote_id)'),
        })
        .strict(),
      output: LabRunSchema,
      async run(ctx, a) {
        const request = labRunRequest(a as Parameters<typeof labRunRequest>[0]);
        const depth = a.depth as LabDepth;
        return ctx.lab
          .run(ctx.snapshot, request, depth, ctx.viewer, (usd) => ctx.charge(usd), await ctx.paidBefore())
          .catch((e: unknown) => {
            throw quoteFromTool(e);
          });
      },
      // The whole run is REST's run of the same quote (a quote is kept by its quote_id once issued).
      fit(answer, args, viewer) {
        const run = answer as Parameters<typeof fitPapers>[0] & { quote_id: string };
        const url = restUrl('labRun', { quote_id: run.quote_id, depth: args.depth }, viewer.publicUrl);
        return fitPapers(
          run,
          `${url} (the same run by REST while the quote is valid; without a key it is paid again)`,
        );
      },
    },
    {
      name: 'list_elements',
      op: 'listElements',
      description: `${d('listElements')}; symbols (Fe,Ni,Co) gives only those, in that order.`,
      input: z.object({ symbols: SymbolsQuery.optional(), ...PINNED }).strict(),
      output: ElementListSchema,
      run: async (ctx, a) =>
        listElements(ctx.snapshot, ctx.viewer, a.symbols ? batchSymbols(a.symbols as string) : undefined),
    },
    {
      name: 'get_element_history',
      op: 'getElementHistory',
      description: `${d('getElementHistory')}, one value per period to the corpus cut-off (the last is incomplete).${HISTORY_SIZE}`,
      input: SymbolParam.extend({ resolution: ResolutionQuery, ...HistoryRangeQuery, ...PINNED }).strict(),
      output: ElementHistorySchema,
      async run(ctx, a) {
        // Refused before the payment, as on REST.
        const range = historyRange(a.resolution as 'yearly', rangeOf(a));
        canonicalSymbol(a.symbol as string);
        await ctx.charge();
        return elementHistory(ctx.snapshot, a.symbol as string, a.resolution as 'yearly', ctx.viewer, range);
      },
      fit: fitted('getElementHistory'),
    },
    {
      name: 'get_element_histories',
      op: 'getElementHistories',
      description: `${d('getElementHistories')}, at most ${MAX_HISTORY_BATCH}.${HISTORY_SIZE}`,
      input: z
        .object({ symbols: SymbolsQuery, resolution: ResolutionQuery, ...HistoryRangeQuery, ...PINNED })
        .strict(),
      output: ElementHistoriesSchema,
      async run(ctx, a) {
        const list = batchSymbols(a.symbols as string, MAX_HISTORY_BATCH);
        const range = historyRange(a.resolution as 'yearly', rangeOf(a));
        await ctx.charge(batchPrice(operation('getElementHistories'), list.length) ?? undefined);
        return elementHistories(ctx.snapshot, list, a.resolution as 'yearly', ctx.viewer, range);
      },
      fit: fitted('getElementHistories'),
    },
    {
      name: 'list_versions',
      op: 'listVersions',
      description: `${d('listVersions')}.`,
      input: z.object({}).strict(),
      output: VersionsSchema,
      run: async (ctx) => listVersions(ctx.snapshot, ctx.snapshotDir, ctx.viewer),
    },
    {
      name: 'get_changes',
      op: 'listChanges',
      description: `${d('listChanges')}. since: default the last publication; kind: default all (topics, keywords: Personal); min_move in RIS points; direction up or down. With symbol, or subject_type and subject_id: that subject's alone.`,
      input: z
        .object({
          kind: KindsArg,
          symbol: SymbolParam.shape.symbol.optional(),
          subject_type: SubjectParams.shape.subject_type.optional(),
          subject_id: SubjectParams.shape.subject_id.optional(),
          ...ChangesQuery,
          ...PINNED,
        })
        .strict(),
      output: ChangesSchema.partial({ kind: true }).extend(
        SubjectChangesSchema.pick({ subject_type: true, subject_id: true, name: true }).partial().shape,
      ),
      route: changesRoute,
      async run(ctx, a) {
        const { since, min_move, direction, limit } = a as {
          since?: string;
          min_move: number;
          direction?: 'up' | 'down';
          limit: number;
        };
        const filters = { since, min_move, direction, limit };
        const answer = a.symbol
          ? elementChanges(ctx.snapshot, a.symbol as string, filters, ctx.viewer)
          : a.subject_type
            ? subjectChanges(
                ctx.snapshot,
                a.subject_type as 'topic',
                a.subject_id as string,
                filters,
                ctx.viewer,
              )
            : listChanges(ctx.snapshot, a.kind as Kind[], filters, ctx.viewer);
        return paid(ctx, answer);
      },
      fit(answer, args, viewer) {
        const changes = answer as Parameters<typeof fitChanges>[0];
        const { op, args: asked } = changesRoute(args);
        const kind = (asked.kind as string[] | undefined)?.join(',');
        const url = restUrl(
          op,
          { ...asked, ...(kind ? { kind } : {}), data_version: changes.data_version },
          viewer.publicUrl,
        );
        return fitChanges(changes, url);
      },
    },
    {
      name: 'get_subject_elements',
      op: 'getSubjectElements',
      description: `${d('getSubjectElements')}, each with its share of the subject's papers.`,
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

/**
 * The one lab refusal whose text names REST's endpoint (an unknown quote_id: "ask for one at
 * /v1/lab/quote"): over MCP it names the tool that gives a quote.
 */
function quoteFromTool(e: unknown): unknown {
  if (!(e instanceof ServiceError) || e.code !== 'unknown_quote') return e;
  return new ServiceError(e.code, e.detail.replace('at /v1/lab/quote', 'with the lab_quote tool'), e.extra);
}

/**
 * get_changes as the REST operation it is: one element's changes (symbol), one topic's or
 * keyword's (subject_type and subject_id), or the list (kind, every kind unless told). Arguments
 * of two of them at once are refused as REST has no such call.
 */
function changesRoute(args: Record<string, unknown>): { op: OperationId; args: Record<string, unknown> } {
  const { kind, symbol, subject_type, subject_id, ...rest } = args;
  const one = subject_type !== undefined || subject_id !== undefined;
  if ([kind !== undefined, symbol !== undefined, one].filter(Boolean).length > 1)
    throw new ServiceError(
      'invalid_parameter',
      "get_changes takes kind (the list), symbol (one element's) or subject_type and subject_id (one subject's), not two of them.",
    );
  if (symbol !== undefined) return { op: 'getElementChanges', args: { symbol, ...rest } };
  if (one) {
    if (subject_type === undefined || subject_id === undefined)
      throw new ServiceError('invalid_parameter', 'subject_type and subject_id go together.');
    return { op: 'getSubjectChanges', args: { subject_type, subject_id, ...rest } };
  }
  return { op: 'listChanges', args: { kind: kind ?? [...KINDS], ...rest } };
}

async function paid<T>(ctx: ToolContext, answer: T): Promise<T> {
  await ctx.charge();
  return answer;
}

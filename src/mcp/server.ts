import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { PaymentRequired } from '@x402/core/types';
import { z } from 'zod';
import { editionDescriptions, editionText } from '../access/edition-text.js';
import type { Plan } from '../access/plans.js';
import { type Edition, type OperationId, operation, PAID_CALL_RULE } from '../access/policy.js';
import { type CallDeps, OperationCall } from '../calls/operation-call.js';
import { pinnedSnapshot } from '../calls/pinned-snapshot.js';
import type { Notes } from '../contracts/common.js';
import { DATA_VERSION_DIGITS } from '../contracts/data-version.js';
import { termsOf } from '../contracts/queries.js';
import { RESULT_TOKENS } from '../core/answer-size.js';
import { answerText, jsonRpcResponse } from '../core/answer-text.js';
import { ServiceError } from '../core/errors.js';
import type { LabService } from '../core/lab-service.js';
import { NOTES_URI, sharedNoteTexts, withOwnNotes } from '../core/reading-notes.js';
import { viewerFor } from '../core/viewer.js';
import { inThread, type WorkerPool } from '../core/worker-pool.js';
import type { ResponseEnvelope } from '../core/worker-tasks.js';
import { accessText } from '../payments/discovery.js';
import { PaymentDemand } from '../payments/paid-call.js';
import type { PaymentService } from '../payments/payment-service.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';
import { canonicalJson } from '../util/canonical-json.js';
import { chooseEncoding } from '../util/compression.js';
import { type CachedAnswer, type HeaderOf, McpAnswerCache } from './answer-cache.js';
import { outlineSchema } from './outline-schema.js';
import { portableSchema } from './portable-schema.js';
import { ResultJson, toolDefinitions } from './tools.js';

export interface McpDeps {
  snapshots: SnapshotManager;
  edition: Edition;
  publicUrl: string;
  lab: LabService | null;
  /** Where research is computed; in this thread when absent. */
  workerPool?: WorkerPool;
  /** Pay per call (x402), when this server takes it. */
  payments: PaymentService | undefined;
  version: string;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** Who is calling on this connection (from its Authorization header). */
export interface McpCaller {
  plan: Plan | null;
}

/**
 * The remote MCP tool server: the spec's nine tools and five reads beside them, over the same
 * core, access table and payment module as REST. Stateless Streamable HTTP: a protocol server per request. A user's
 * mistake is a tool result with isError and the REST error code, never a protocol error.
 */
export function createMcp(deps: McpDeps) {
  const tools = toolDefinitions().filter((t) => deps.edition === 'full' || !operation(t.op).fullEditionOnly);
  const byName = new Map(tools.map((t) => [t.name, t]));
  // Sized for a model's context (bench/mcp-tokens.mjs): what every tool shares is said once, in
  // the server's instructions; output schemas name the answer's fields and their types only.
  // Descriptions are written for the full edition; the older one names its one plan, Enterprise.
  const listing: Tool[] = tools.map((t) => ({
    name: t.name,
    description: `${editionText(t.description, deps.edition)} ${accessText(operation(t.op), deps.edition, Boolean(deps.payments?.enabled))}`,
    // Both as every host reads them (portable-schema.ts): no type lists, no empty schemas.
    inputSchema: portableSchema(
      editionDescriptions(
        listedInput(z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' })),
        deps.edition,
      ),
    ),
    outputSchema: portableSchema(
      outlineSchema(z.toJSONSchema(t.output, { io: 'output', unrepresentable: 'any' })),
    ),
    // A lab quote is stored and a lab run delivers (and charges for) a deliverable: hosts that
    // approve read-only tools on their own must ask before those. (The hints a read-only tool
    // leaves out mean nothing for it.)
    annotations: t.writes
      ? { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
      : { readOnlyHint: true, openWorldHint: false },
  }));
  const payments = deps.payments?.enabled ? deps.payments : undefined;
  const callDeps: CallDeps = {
    snapshots: deps.snapshots,
    edition: deps.edition,
    publicUrl: deps.publicUrl,
    payments,
    ...(deps.log ? { log: deps.log } : {}),
  };
  const serverInstructions = instructions(deps.publicUrl, Boolean(payments), deps.edition);
  const notesResource = notesResourceOf(deps.edition);

  // The notes every answer of a data version shares (the notes resource) are read as a caller
  // without a key would read them (the same texts for every plan).
  const anonymous = viewerFor(null, deps.edition, deps.publicUrl);

  /** resources/read of a version's notes: the version must be kept, as for data_version. */
  async function readNotes(uri: string) {
    const version = uri.startsWith(NOTES_URI) ? uri.slice(NOTES_URI.length) : '';
    let snapshot: Snapshot | null;
    try {
      snapshot = await pinnedSnapshot(deps.snapshots, version, deps.publicUrl);
    } catch (e) {
      throw new McpError(-32002, `Resource not found: ${uri}. ${(e as Error).message}`);
    }
    if (!snapshot) throw new McpError(-32002, `Resource not found: ${uri}.`);
    try {
      const text = JSON.stringify({
        data_version: snapshot.version,
        notes: sharedNoteTexts(snapshot, anonymous).notes,
      });
      return { contents: [{ uri, mimeType: 'application/json', text }] };
    } finally {
      snapshot.release();
    }
  }

  /** `answered.from` is set to the snapshot the call answered from (the answer cache keeps its version). */
  async function callTool(
    name: string,
    args: unknown,
    meta: Record<string, unknown> | undefined,
    caller: McpCaller,
    envelope?: ResponseEnvelope,
    answered: { from?: Snapshot } = {},
  ): Promise<CallToolResult | ResultJson> {
    const tool = byName.get(name);
    if (!tool) return errorResult(new ServiceError('not_found', `No tool named '${name}'.`));
    if (!deps.lab && (tool.name === 'lab_quote' || tool.name === 'lab_run'))
      return errorResult(new ServiceError('not_found', `No tool named '${name}'.`));
    // Parsed once, by the tool's own schema: the price and the plan a call needs read the parsed
    // arguments; ones that do not parse are refused as invalid (after access, as on REST).
    const parsed = tool.input.safeParse(args ?? {});
    // The operation the call is (a tool whose arguments choose it: that one's plan and price).
    let routed: { op: OperationId; args: Record<string, unknown> } | undefined;
    let unrouted: unknown;
    try {
      if (parsed.success) routed = tool.route?.(parsed.data) ?? { op: tool.op, args: parsed.data };
    } catch (e) {
      unrouted = e;
    }
    const op = operation(routed?.op ?? tool.op);
    let input: Record<string, unknown> = {};
    // The one operation runner REST's middleware uses too (calls/operation-call.ts): this door only
    // translates the arguments in and the outcome out.
    const call = new OperationCall(callDeps, op, caller.plan, {
      payment: meta?.['x402/payment'],
      terms: routed ? termsOf(routed.args) : null,
      what: `The tool ${name}`,
      retry: 'Call this tool again with the same arguments and the same x402/payment',
      resource: (snapshot) => ({
        operation: op.id,
        url: `${deps.publicUrl}/mcp`,
        description: `MCP tool ${name}: ${op.description}`,
        request: `tools/call ${name} ${canonicalJson(input)}`,
        ...(snapshot ? { dataVersion: snapshot.version } : {}),
      }),
    });
    const outcome = await call.run(
      () => {
        if (!parsed.success) throw inputProblem(parsed.error.issues);
        if (!routed) throw unrouted;
        input = routed.args;
        // A read pinned with data_version answers from that version, as on REST.
        return { input, version: typeof input.data_version === 'string' ? input.data_version : null };
      },
      async (input, snapshot) => {
        const viewer = viewerFor(call.plan, deps.edition, deps.publicUrl);
        const answer = await tool.run(
          {
            snapshot,
            viewer,
            lab: deps.lab!,
            workerPool: deps.workerPool ?? inThread,
            charge: (usd) => call.charge(usd),
            paidBefore: () => call.paidBefore(),
            snapshotDir: deps.snapshots.dir,
            ...(envelope ? { envelope } : {}),
          },
          input,
        );
        if (answer instanceof ResultJson) return answer;
        // Held to its size as the model reads it: with only its own notes.
        const own = withOwnNotes(answer as { notes?: Notes }, snapshot, viewer);
        return tool.fit ? (tool.fit(own, input, viewer) as typeof own) : own;
      },
    );
    if (call.snapshot) answered.from = call.snapshot;
    if (outcome.error instanceof PaymentDemand) return paymentResult(outcome.error.terms);
    if (outcome.error) return errorResult(outcome.error);
    if (outcome.answer instanceof ResultJson) {
      if (!outcome.receipt) return outcome.answer;
      const meta = JSON.stringify({ 'x402/payment-response': outcome.receipt });
      return new ResultJson(`${outcome.answer.json.slice(0, -1)},"_meta":${meta}}`, true);
    }
    return {
      structuredContent: outcome.answer,
      // The answer itself as text too (the MCP specification's advice for structured results),
      // in TOON: hosts that pass only `content` to the model give it every title, DOI and number.
      content: [{ type: 'text' as const, text: answerText(outcome.answer) }],
      ...(outcome.receipt ? { _meta: { 'x402/payment-response': outcome.receipt } } : {}),
    };
  }

  // One JSON Schema validator for every request: the SDK would otherwise build an Ajv per server.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();

  const answers = new McpAnswerCache(byName, deps.edition);
  // A version set aside (a damaged file) or no longer kept: none of its answers is given again.
  deps.snapshots.onForget((version) => answers.forget(version));

  return {
    /**
     * A repeated read-tool call answered from the cache (answer-cache.ts), before any Request or
     * protocol server is built; null when it is not one or not yet cached (then `handle`).
     */
    cached(header: HeaderOf, caller: McpCaller, parsedBody: unknown, gzip: boolean): CachedAnswer | null {
      const key = answers.keyOf(header, parsedBody, caller.plan, deps.snapshots.version);
      return key ? answers.answer(key, (parsedBody as { id: string | number }).id, gzip) : null;
    },

    /**
     * A single tools/call that the SDK's transport would accept (headers, JSON-RPC shape, the
     * SDK's own CallToolRequestSchema), answered straight from callTool as the SDK would answer
     * it (a JSON-RPC result in JSON mode), without building a Request, a protocol server and a
     * transport per call, which cost a cold call a fifth more than REST. Null: anything else
     * (initialize, tools/list, batches, malformed requests, wrong headers) goes to the SDK.
     */
    async direct(
      header: HeaderOf,
      caller: McpCaller,
      parsedBody: unknown,
    ): Promise<string | CachedAnswer | null> {
      const m = parsedBody as { jsonrpc?: unknown; id?: unknown } | null;
      if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return null;
      if (typeof m.id !== 'string' && typeof m.id !== 'number') return null;
      const accept = header('accept') ?? '';
      if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
      if (!(header('content-type') ?? '').includes('application/json')) return null;
      const protocol = header('mcp-protocol-version');
      if (protocol !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocol)) return null;
      const call = CallToolRequestSchema.safeParse(parsedBody);
      if (!call.success || call.data.params.task !== undefined) return null;
      const { name, arguments: args, _meta } = call.data.params;
      const encoding = chooseEncoding(header('accept-encoding'));
      const envelope = encoding ? { id: m.id, encoding } : undefined;
      // Keyed by the version current when the call began, as a cached answer is looked up.
      const current = deps.snapshots.version;
      const key = answers.keyOf(header, parsedBody, caller.plan, current);
      const answered: { from?: Snapshot } = {};
      const result = await callTool(
        name,
        args,
        _meta as Record<string, unknown> | undefined,
        caller,
        envelope,
        answered,
      );
      // The result serialised once, for the answer and for the cache (the SDK's key order).
      const json = result instanceof ResultJson ? result.json : JSON.stringify(result);
      // Kept unless an error or a paid call (its receipt is its own), or another version became
      // current meanwhile (its key would name the wrong one).
      const kept =
        (result instanceof ResultJson ? !result.paid : !result.isError && result._meta === undefined) &&
        deps.snapshots.version === current;
      if (key && kept && answered.from) answers.keepResult(key, json, answered.from);
      // Research's response comes written and compressed from the worker that computed it.
      if (result instanceof ResultJson && result.response)
        return {
          body: Buffer.from(
            result.response.body.buffer,
            result.response.body.byteOffset,
            result.response.body.byteLength,
          ),
          headers: {
            'content-type': 'application/json',
            'content-encoding': result.response.encoding,
            vary: 'Accept-Encoding',
          },
        };
      return jsonRpcResponse(json, m.id);
    },

    /** Answers one HTTP request at /mcp (a POST's JSON body already read and parsed). */
    async handle(request: Request, caller: McpCaller, parsedBody?: unknown): Promise<Response> {
      const current = deps.snapshots.version;
      const key = answers.keyOf(
        (name) => request.headers.get(name) ?? undefined,
        parsedBody,
        caller.plan,
        current,
      );
      const answered: { from?: Snapshot } = {};
      const server = new Server(
        { name: 'research-intensity', version: deps.version },
        {
          capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
          jsonSchemaValidator,
          instructions: serverInstructions,
        },
      );
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
      server.setRequestHandler(ListResourcesRequestSchema, async () => {
        const version = deps.snapshots.version;
        return {
          resources: version ? [{ uri: notesUri(version), ...notesResource, name: `notes-${version}` }] : [],
        };
      });
      server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
        resourceTemplates: [{ uriTemplate: `${NOTES_URI}{data_version}`, ...notesResource, name: 'notes' }],
      }));
      server.setRequestHandler(ReadResourceRequestSchema, async (req) => readNotes(req.params.uri));
      server.setRequestHandler(CallToolRequestSchema, async (req) => {
        const result = await callTool(
          req.params.name,
          req.params.arguments,
          req.params._meta as Record<string, unknown> | undefined,
          caller,
          undefined,
          answered,
        );
        return result instanceof ResultJson ? (JSON.parse(result.json) as CallToolResult) : result;
      });
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      // Not closed afterwards: in stateless JSON mode nothing outlives the answer, and close()
      // would abort every handler's signal with an error object (a tenth of a small call's cost).
      const response = await transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody });
      return key && answered.from && deps.snapshots.version === current
        ? answers.keep(key, response, answered.from)
        : response;
    },
  };
}

/** Where the notes every answer of a data version shares are read (resources/read). */
const notesUri = (version: string) => `${NOTES_URI}${version}`;
/** The notes resource as listed; the older edition has no lab to read notes on. */
const notesResourceOf = (edition: Edition) => ({
  title: 'How to read the answers of a data version',
  description: `The notes every answer of this data version shares (how to read RI, RIS, HRI, paper lists, histories${edition === 'full' ? ', the lab' : ''}; the corpus; how to cite), by name. A result names this resource in notes.read and keeps only its own notes.`,
  mimeType: 'application/json',
});

/**
 * A tool's input schema as listed: without its dialect line (the MCP default is the same), with
 * data_version and a history's range (from, to, last) as plain types, their use and form said once
 * in the instructions instead of in every tool that takes them, and without the length bounds of
 * text parameters, which a model needs no help to keep (the tool still refuses a malformed or
 * overlong one with invalid_parameter, naming the form or the bound).
 */
function listedInput(schema: object): Tool['inputSchema'] {
  const { $schema: _, ...rest } = schema as Record<string, unknown>;
  const properties = (rest.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const [name, property] of Object.entries(properties)) {
    const type = PLAINLY_LISTED[name];
    if (type) properties[name] = { type };
    else if (property.type === 'string') {
      delete property.minLength;
      delete property.maxLength;
    }
  }
  return rest as Tool['inputSchema'];
}

/** The parameters listed by their type alone (listedInput). */
const PLAINLY_LISTED: Record<string, string> = {
  data_version: 'string',
  from: 'string',
  to: 'string',
  last: 'integer',
};

/**
 * A ServiceError as a tool result: isError, and the same body as the REST problem as JSON text.
 * No structuredContent: the SDK's client checks any structuredContent against the tool's output
 * schema (after tools/list), and an error is not the tool's output.
 */
function errorResult(e: ServiceError): CallToolResult {
  const body = { code: e.code, title: e.title, status: e.status, detail: e.detail, ...e.extra };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] };
}

/**
 * An unpaid (or not accepted, or not settled) priced call, as the x402 MCP transport says: the
 * PaymentRequired in the first text block, wrapped as {"x402/error": {code: 402, message, data}}.
 */
function paymentResult(terms: PaymentRequired): CallToolResult {
  const message =
    terms.error ??
    'Payment required: sign these terms with an x402 client and call again with _meta["x402/payment"].';
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify({ 'x402/error': { code: 402, message, data: terms } }) }],
  };
}

function inputProblem(issues: readonly z.core.$ZodIssue[]): ServiceError {
  const issue = issues[0];
  if (issue?.code === 'unrecognized_keys' && issue.keys.length) {
    return new ServiceError(
      'invalid_parameter',
      `Unknown parameter '${issue.keys[0]}': this tool does not take it.`,
      {
        parameter: issue.keys[0],
      },
    );
  }
  const name = issue?.path.map(String).join('.') || 'arguments';
  return new ServiceError('invalid_parameter', `Parameter '${name}': ${issue?.message ?? 'invalid'}.`, {
    parameter: name,
  });
}

/**
 * What the server tells a host once, so no tool description or result has to repeat it; in the
 * older edition it names its one plan and nothing it does not serve (research, the lab, payment).
 */
function instructions(publicUrl: string, payments: boolean, edition: Edition): string {
  return [
    'Research-intensity scores for the 118 chemical elements and for research topics and keywords, from a corpus of scientific papers (OpenAlex works).',
    editionText(
      'RI: papers on a subject per 10,000 papers of the corpus (a share of research output, not quality). RIS (0-100): recency-weighted output on a log scale against the most-researched subject of the same type; compare only subjects of one type within one data_version. HRI: the same share as RI among high-impact papers (null below the Personal plan).',
      edition,
    ),
    `Subjects: subject_type topic (subject_id like T10030) or keyword (its slug); find them with search_subjects. Papers are ranked by impact_score (a citation percentile within field and year, young papers projected); only the top 100 of a subject are ranked; never rank them by ris_contribution. Abstracts are never returned: the DOI points to the source. A paper costs about 130 tokens and a result holds about ${RESULT_TOKENS.toLocaleString('en-US')} (some 60 papers): a longer list keeps its first papers, and notes.left_out gives the URL of the whole answer (a paper list has no pages).`,
    `Histories: from and to (periods in the resolution's form: 2024, 2024-03 or 2024-03-15; both included) and last (the N most recent) narrow one. A period costs about 16 tokens and a result holds about ${RESULT_TOKENS.toLocaleString('en-US')} (a year of daily periods): a longer one keeps its most recent periods, and notes.left_out gives the arguments that get the older ones and the URL of the whole answer.`,
    `Results: structuredContent holds the answer as JSON; the text block holds the same answer in TOON (a list of records is a table: its columns named once in the header, cells separated by |). Every answer has canonical_url (the page to cite) and data_version (${DATA_VERSION_DIGITS} hex digits: give it back as data_version to any read tool to get the same data again, while list_versions lists it). notes keeps only what that answer alone says; notes.read names the resource (resources/read) with the notes every answer of that data version shares: how to read each metric, the corpus, how to cite.`,
    ...(edition === 'full'
      ? [
          'research turns a question into communities and reading lists; lab_quote then lab_run deliver a filtered paper list.',
        ]
      : []),
    payments
      ? `A price in a description (x402: ...) is what a call costs without a key. Without a key, priced tools answer with x402 terms in the first text block ({"x402/error": {"code": 402, "data": <PaymentRequired>}}): sign them with an x402 client and call again with _meta["x402/payment"]; the receipt is in _meta["x402/payment-response"]. ${PAID_CALL_RULE} An error settlement_pending: call again with the same arguments and payment. Plans and prices: ${publicUrl}/pricing.`
      : `Keys and plans: ${publicUrl}/account and ${publicUrl}/pricing.`,
  ].join('\n');
}

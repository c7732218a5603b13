import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { PaymentRequired } from '@x402/core/types';
import { z } from 'zod';
import type { Plan } from '../access/plans.js';
import {
  type Edition,
  goesAsPayer,
  isPriced,
  type Operation,
  operation,
  PAID_CALL_RULE,
  payerPlan,
  priceOf,
  requestLevel,
} from '../access/policy.js';
import { accessRefusal } from '../access/refusal.js';
import { ServiceError } from '../core/errors.js';
import type { LabService } from '../core/lab-service.js';
import { viewerFor } from '../core/viewer.js';
import { pinnedSnapshot } from '../http/data-version.js';
import { type HeavyWork, inThread } from '../offload/heavy-work.js';
import { priceInfo } from '../payments/discovery.js';
import {
  PaymentError,
  type PaymentService,
  settlementPendingProblem,
  type VerifiedPayment,
} from '../payments/payment-service.js';
import { isCorruption, type Snapshot, type SnapshotManager } from '../snapshot/snapshot.js';
import { type CachedAnswer, type HeaderOf, McpAnswerCache } from './answer-cache.js';
import { toolDefinitions } from './tools.js';

export interface McpDeps {
  snapshots: SnapshotManager;
  edition: Edition;
  publicUrl: string;
  lab: LabService | null;
  /** Where research is computed; in this thread when absent. */
  heavy?: HeavyWork;
  /** Pay per call (x402), when this server takes it. */
  payments: PaymentService | undefined;
  version: string;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** Who is calling on this connection (from its Authorization header). */
export interface McpCaller {
  plan: Plan | null;
}

/** An unpaid (or not accepted) priced call: the x402 MCP transport's payment-required result. */
class PaymentNeeded extends Error {
  constructor(readonly terms: PaymentRequired) {
    super('payment required');
  }
}

/**
 * The remote MCP tool server: the spec's nine tools and five reads beside them, over the same
 * core, access table and payment module as REST. Stateless Streamable HTTP: a protocol server per request. A user's
 * mistake is a tool result with isError and the REST error code, never a protocol error.
 */
export function createMcp(deps: McpDeps) {
  const tools = toolDefinitions().filter((t) => deps.edition === 'full' || !operation(t.op).fullEditionOnly);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const listing: Tool[] = tools.map((t) => ({
    name: t.name,
    title: operation(t.op).description,
    description: `${t.description} ${accessLine(operation(t.op), deps.edition, Boolean(deps.payments?.enabled))}`,
    inputSchema: z.toJSONSchema(t.input, { io: 'input', unrepresentable: 'any' }) as Tool['inputSchema'],
    outputSchema: z.toJSONSchema(t.output, { io: 'output', unrepresentable: 'any' }) as Tool['outputSchema'],
    // A lab quote is stored and a lab run delivers (and charges for) a deliverable: hosts that
    // approve read-only tools on their own must ask before those.
    annotations: {
      readOnlyHint: !t.writes,
      destructiveHint: false,
      idempotentHint: !t.writes,
      openWorldHint: false,
    },
  }));
  const payments = deps.payments?.enabled ? deps.payments : undefined;
  const serverInstructions = instructions(deps.publicUrl, Boolean(payments));

  async function callTool(
    name: string,
    args: unknown,
    meta: Record<string, unknown> | undefined,
    caller: McpCaller,
  ) {
    const tool = byName.get(name);
    if (!tool) return errorResult(new ServiceError('not_found', `No tool named '${name}'.`));
    const op = operation(tool.op);
    const priced = isPriced(op);
    const sent = meta?.['x402/payment'];
    const limit = (args as { limit?: unknown } | undefined)?.limit;
    let plan = caller.plan;
    let payer = false;
    const resolution = (args as { resolution?: unknown } | undefined)?.resolution;
    const asked = typeof resolution === 'string' ? resolution : undefined;
    if (payments && goesAsPayer(op, plan, deps.edition, sent !== undefined, asked)) {
      plan = payerPlan(op, deps.edition, asked);
      payer = true;
    }
    // Access first, as on REST (a caller without the plan learns that before anything about the arguments).
    // The level of this exact call: a history's resolution may raise it (monthly Personal, daily Professional).
    const level = requestLevel(op, asked);
    const refusal = accessRefusal({ plan, payer }, level, {
      edition: deps.edition,
      publicUrl: deps.publicUrl,
      what: level === op.access ? `The tool ${name}` : `The tool ${name} with resolution ${asked}`,
      op,
      payments: Boolean(payments),
      price: priced ? priceOf(op, typeof limit === 'number' ? limit : undefined) : null,
    });
    if (refusal) return errorResult(refusal);
    const parsed = tool.input.safeParse(args ?? {});
    if (!parsed.success) return errorResult(inputProblem(parsed.error.issues));
    const input = parsed.data as Record<string, unknown>;
    let snapshot: Snapshot | null;
    try {
      // A read pinned with data_version answers from that version, as on REST (data-version.ts);
      // a retry of a payment from the version that payment bought (never newer data).
      const paidFor = payer && payments && sent !== undefined ? await payments.priorPayment(sent) : null;
      const pinned =
        paidFor?.dataVersion ?? (typeof input.data_version === 'string' ? input.data_version : null);
      snapshot =
        pinned !== null
          ? await pinnedSnapshot(deps.snapshots, pinned, deps.publicUrl)
          : deps.snapshots.acquire();
    } catch (e) {
      return errorResult(e as ServiceError);
    }
    if (!snapshot) return errorResult(new ServiceError('data_unavailable', deps.snapshots.unavailable()));
    let verified: VerifiedPayment | undefined;
    const resource = {
      operation: op.id,
      url: `${deps.publicUrl}/mcp`,
      description: `MCP tool ${name}: ${op.description}`,
      request: `tools/call ${name} ${canonicalJson(input)}`,
      dataVersion: snapshot.version,
    };
    const charge = async (usd?: number) => {
      if (!payer || !payments) return;
      const price = usd ?? priceOf(op, input.limit as number | undefined)!;
      if (sent === undefined) throw new PaymentNeeded(await payments.paymentRequired(price, resource));
      try {
        verified = await payments.verify(sent, price, resource);
      } catch (e) {
        if (!(e instanceof PaymentError)) throw e;
        if (e.code === 'payment_unavailable')
          throw new ServiceError(
            'payment_unavailable',
            `The payment could not be verified now (${e.reason}); nothing was charged.`,
          );
        if (e.code === 'payment_id_conflict')
          throw new ServiceError('payment_id_conflict', `${e.reason}. Nothing was charged.`);
        throw new PaymentNeeded(await payments.paymentRequired(price, resource, e.reason));
      }
    };
    try {
      const viewer = viewerFor(plan, deps.edition, deps.publicUrl);
      if (!deps.lab && (tool.name === 'lab_quote' || tool.name === 'lab_run'))
        return errorResult(new ServiceError('not_found', `No tool named '${name}'.`));
      const answer = await tool.run(
        {
          snapshot,
          viewer,
          lab: deps.lab!,
          heavy: deps.heavy ?? inThread,
          charge,
          snapshotDir: deps.snapshots.dir,
        },
        input,
      );
      let receipt: Record<string, unknown> | undefined;
      if (verified && payments) {
        const v = verified;
        verified = undefined;
        try {
          receipt = { 'x402/payment-response': await payments.settle(v) };
        } catch (e) {
          if (!(e instanceof PaymentError)) throw e;
          if (e.code === 'settlement_pending')
            return errorResult(
              settlementPendingProblem(
                e,
                'Call this tool again with the same arguments and the same x402/payment',
              ),
            );
          // Settlement failed after the tool ran: the payment-required shape and no content.
          return paymentResult(
            await payments.paymentRequired(Number(v.requirements.amount) / 1e6, resource, e.reason),
          );
        }
      }
      return {
        structuredContent: answer as Record<string, unknown>,
        // The answer itself as text too (the MCP specification's advice for structured results):
        // hosts that pass only `content` to the model give it every title, DOI and number.
        content: [{ type: 'text' as const, text: JSON.stringify(answer) }],
        ...(receipt ? { _meta: receipt } : {}),
      };
    } catch (e) {
      if (verified && payments) await payments.release(verified);
      if (e instanceof PaymentNeeded) return paymentResult(e.terms);
      if (e instanceof ServiceError) return errorResult(e);
      if (isCorruption(e)) {
        void deps.snapshots.suspect(snapshot);
        return errorResult(
          new ServiceError('data_unavailable', 'The data snapshot could not be read; try again shortly.'),
        );
      }
      deps.log?.('tool failed', { tool: name, err: (e as Error).message, stack: (e as Error).stack });
      return errorResult(
        new ServiceError('internal_error', 'The tool failed to answer; the error was logged.'),
      );
    } finally {
      snapshot.release();
    }
  }

  // One JSON Schema validator for every request: the SDK would otherwise build an Ajv per server.
  const jsonSchemaValidator = new AjvJsonSchemaValidator();

  const answers = new McpAnswerCache(byName, deps.edition);

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
    async direct(header: HeaderOf, caller: McpCaller, parsedBody: unknown): Promise<string | null> {
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
      const result = await callTool(name, args, _meta as Record<string, unknown> | undefined, caller);
      // The result serialised once, for the answer and for the cache (the SDK's key order).
      const json = JSON.stringify(result);
      const key = answers.keyOf(header, parsedBody, caller.plan, deps.snapshots.version);
      if (key) answers.keepResult(key, result, json);
      return `{"result":${json},"jsonrpc":"2.0","id":${JSON.stringify(m.id)}}`;
    },

    /** Answers one HTTP request at /mcp (a POST's JSON body already read and parsed). */
    async handle(request: Request, caller: McpCaller, parsedBody?: unknown): Promise<Response> {
      const key = answers.keyOf(
        (name) => request.headers.get(name) ?? undefined,
        parsedBody,
        caller.plan,
        deps.snapshots.version,
      );
      const server = new Server(
        { name: 'research-intensity', version: deps.version },
        {
          capabilities: { tools: { listChanged: false } },
          jsonSchemaValidator,
          instructions: serverInstructions,
        },
      );
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: listing }));
      server.setRequestHandler(CallToolRequestSchema, async (req) =>
        callTool(
          req.params.name,
          req.params.arguments,
          req.params._meta as Record<string, unknown> | undefined,
          caller,
        ),
      );
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      // Not closed afterwards: in stateless JSON mode nothing outlives the answer, and close()
      // would abort every handler's signal with an error object (a tenth of a small call's cost).
      const response = await transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody });
      return key ? answers.keep(key, response) : response;
    },
  };
}

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

/** Arguments as one string whatever their key order: the same call gives the same text. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Who may call a tool and what it costs without a key, from the access table, for its description. */
function accessLine(op: Operation, edition: Edition, payments: boolean): string {
  const who = {
    public: 'Free, no key needed.',
    key: 'Any API key (a free account).',
    personal: edition === 'full' ? 'Needs the Personal plan.' : 'Needs the Enterprise plan.',
    professional: edition === 'full' ? 'Needs the Professional plan.' : 'Needs the Enterprise plan.',
  }[op.access];
  if (!isPriced(op) || !payments) return who;
  const price = priceInfo(op) as {
    usd?: number;
    rule?: string;
    tiers?: { up_to_papers: number | null; usd: number }[];
  };
  const cost = price.tiers
    ? price.tiers.map((t) => `${t.usd.toFixed(2)} USD up to ${t.up_to_papers} papers`).join(', ')
    : price.usd !== undefined
      ? `${price.usd.toFixed(2)} USD${op.perSymbol ? ' per symbol' : ''}`
      : (price.rule ?? '');
  return `${who} Without a key, paid per call (x402): ${cost}.`;
}

/** What the server tells a host once, so no result has to repeat it. */
function instructions(publicUrl: string, payments: boolean): string {
  return [
    'Research-intensity scores for the 118 chemical elements and for research topics and keywords, from a corpus of scientific papers (OpenAlex works).',
    'RI: research output on a subject per 10,000 papers of the corpus (a share, not quality). RIS (0-100): RI rescaled among subjects of one type, comparable only within one data_version. HRI: the share among high-impact papers (null below the Personal plan). Never rank papers by ris_contribution.',
    'Every answer has canonical_url (the page to cite), notes (how to read it for this data) and data_version (pass it back as data_version to get the same data again).',
    'Find a topic or keyword with search_subjects, then use its subject_type and subject_id. research turns a question into communities and reading lists; lab_quote then lab_run deliver a filtered paper list.',
    payments
      ? `Without a key, priced tools answer with x402 terms in the first text block ({"x402/error": {"code": 402, "data": <PaymentRequired>}}): sign them with an x402 client and call again with _meta["x402/payment"]; the receipt is in _meta["x402/payment-response"]. ${PAID_CALL_RULE} An error settlement_pending: call again with the same arguments and payment. Prices: ${publicUrl}/pricing.`
      : `Keys and plans: ${publicUrl}/account and ${publicUrl}/pricing.`,
  ].join('\n');
}

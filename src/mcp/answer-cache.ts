import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Plan } from '../access/plans.js';
import { type Edition, operation, planAllows } from '../access/policy.js';
import type { ToolDef } from './tools.js';

const MAX_BYTES = 16 * 1024 * 1024;

interface Entry {
  result: string;
  headers: [string, string][];
}

/**
 * Answers of read tools, kept like REST's response cache: a repeated tools/call of a read tool
 * (same plan, tool, arguments and data version) is answered from here without building a protocol
 * server, which costs ten times the REST answer. Only calls that need no payment, carry no
 * `_meta` and name a protocol version the SDK supports; the first answer comes from the SDK, so
 * a cached answer is the SDK's own result with the new request's id. Lab tools never (a quote is
 * stored when made). Bounded by bytes; the oldest entries go first.
 */
export class McpAnswerCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly tools: ReadonlyMap<string, ToolDef>,
    private readonly edition: Edition,
  ) {}

  /** The cache key of a request that may be answered from the cache, else null. */
  keyOf(request: Request, body: unknown, plan: Plan | null, version: string | null): string | null {
    if (version === null || !body || typeof body !== 'object' || Array.isArray(body)) return null;
    const m = body as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: unknown };
    if (m.jsonrpc !== '2.0' || m.method !== 'tools/call') return null;
    if (typeof m.id !== 'string' && typeof m.id !== 'number') return null;
    const params = m.params as { name?: unknown; arguments?: unknown; _meta?: unknown } | undefined;
    if (!params || typeof params.name !== 'string' || params._meta !== undefined) return null;
    const tool = this.tools.get(params.name);
    if (!tool || tool.op.startsWith('lab')) return null;
    const op = operation(tool.op);
    // Free for this caller: a public tool, or a plan that includes it (never a per-call payment).
    if (op.access !== 'public' && (plan === null || !planAllows(plan, op.access, this.edition))) return null;
    const accept = request.headers.get('accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
    const protocol = request.headers.get('mcp-protocol-version');
    if (protocol !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocol)) return null;
    return `${plan}\u0000${version}\u0000${params.name}\u0000${JSON.stringify(params.arguments ?? {})}`;
  }

  /** The cached answer to this request, with its id. */
  answer(key: string, id: string | number): Response | null {
    const hit = this.entries.get(key);
    if (!hit) return null;
    return new Response(`{"result":${hit.result},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`, {
      status: 200,
      headers: hit.headers,
    });
  }

  /** Keeps the SDK's answer when it is a result (not an error); returns an answer to send. */
  async keep(key: string, response: Response): Promise<Response> {
    if (
      response.status !== 200 ||
      !(response.headers.get('content-type') ?? '').startsWith('application/json')
    )
      return response;
    const text = await response.text();
    const headers = [...response.headers];
    try {
      const message = JSON.parse(text) as { result?: { isError?: boolean } };
      if (message.result && !message.result.isError)
        this.store(key, { result: JSON.stringify(message.result), headers });
    } catch {
      // not JSON after all: answered as it is, not kept
    }
    return new Response(text, { status: 200, headers });
  }

  private store(key: string, entry: Entry): void {
    const size = key.length + entry.result.length;
    if (size > MAX_BYTES / 16) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= key.length + old.result.length;
    }
    for (const [k, e] of this.entries) {
      if (this.bytes + size <= MAX_BYTES) break;
      this.entries.delete(k);
      this.bytes -= k.length + e.result.length;
    }
    this.entries.set(key, entry);
    this.bytes += size;
  }
}

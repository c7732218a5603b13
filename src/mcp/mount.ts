import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { Plan } from '../access/plans.js';
import type { CachedAnswer } from './answer-cache.js';
import { readBody } from './body.js';
import { createMcp, type McpDeps } from './server.js';

/** What the HTTP server lends the tool server it mounts, besides the tool server's own deps. */
export interface McpHost {
  /** Checks and counts the caller's key as for REST; sets the context's `caller`. */
  callerChecks: MiddlewareHandler;
  /** The largest request body read (413 past it). */
  maxBodyBytes: number;
  /** Whether the request accepts gzip, the one encoding cached answers are kept in. */
  acceptsGzip(c: Context): boolean;
  /** A cached answer sent as ready bytes, with the headers the server puts on every response. */
  readyResponse(c: Context, answer: CachedAnswer): Response;
}

/**
 * The MCP tool server at /mcp on an HTTP app: stateless Streamable HTTP, POST only; a repeated
 * read from the answer cache, a plain tool call answered directly, anything else through the SDK.
 * The key is the connection's, checked by the host's `callerChecks`.
 */
export function mountMcp<E extends { Variables: { caller: { plan: Plan | null } } }>(
  app: Hono<E>,
  deps: McpDeps,
  host: McpHost,
): void {
  const mcp = createMcp(deps);
  app.use('/mcp', host.callerChecks);
  // POST under its own method, so that the request log and the metrics name the route (/mcp): a
  // route registered for every method reads as middleware there.
  app.post('/mcp', async (c) => {
    const text = await readBody(c, host.maxBodyBytes);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return c.json(
        { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null },
        400,
      );
    }
    const caller = { plan: c.get('caller').plan };
    const header = (name: string) => c.req.header(name);
    // A repeated read: ready bytes with every header at once, as a cached REST answer (no Request,
    // no protocol server, nothing compressed per request).
    const hit = mcp.cached(header, caller, body, host.acceptsGzip(c));
    if (hit) return host.readyResponse(c, hit);
    const direct = await mcp.direct(header, caller, body);
    if (typeof direct === 'string') return c.body(direct, 200, { 'content-type': 'application/json' });
    if (direct !== null) return host.readyResponse(c, direct);
    return mcp.handle(c.req.raw, caller, body);
  });
  // Stateless: no server-to-client stream to open (GET) and no session to end (DELETE).
  app.all('/mcp', (c) =>
    c.json(
      {
        jsonrpc: '2.0',
        error: {
          code: -32000,
          message: 'Method not allowed: this MCP server is stateless; POST JSON-RPC requests.',
        },
        id: null,
      },
      405,
      { allow: 'POST' },
    ),
  );
}

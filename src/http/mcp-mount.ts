import type { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { SERVICE_VERSION } from '../config/paths.js';
import { readBody } from '../mcp/body.js';
import { createMcp } from '../mcp/server.js';
import type { AppServices } from './app-services.js';
import type { AppDeps, AppEnv } from './context.js';
import { acceptsGzip, markPrecompressed } from './fast-path/compression.js';
import { takeResponseHeaders } from './fast-path/response-headers.js';
import { MAX_BODY_BYTES } from './problem.js';

/**
 * The MCP tool server at /mcp: the same core, access table and payments as REST; the key is the
 * connection's, checked and counted by `callerChecks` (the REST middleware's own key and rate
 * limit). The one place http reaches into src/mcp.
 */
export function mountMcp(
  app: OpenAPIHono<AppEnv>,
  deps: AppDeps,
  services: AppServices,
  callerChecks: MiddlewareHandler,
): void {
  const mcp = createMcp({
    ...(deps.heavy ? { heavy: deps.heavy } : {}),
    snapshots: deps.snapshots,
    edition: deps.config.EDITION,
    publicUrl: deps.config.publicUrl,
    lab: services.lab,
    payments: services.paymentsOn ? deps.payments : undefined,
    version: SERVICE_VERSION,
    log: services.log,
  });
  app.use('/mcp', callerChecks);
  app.all('/mcp', async (c) => {
    // Stateless: no server-to-client stream to open (GET) and no session to end (DELETE).
    if (c.req.method !== 'POST')
      return c.json(
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
      );
    const text = await readBody(c, MAX_BODY_BYTES);
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
    // A repeated read: ready bytes with every header at once, as a cached REST answer (no Request,
    // no protocol server, nothing compressed per request).
    const hit = mcp.cached(
      (name) => c.req.header(name),
      caller,
      body,
      acceptsGzip(c.req.header('accept-encoding')),
    );
    if (hit) {
      markPrecompressed(c);
      return new Response(hit.body, {
        status: 200,
        headers: takeResponseHeaders(c, hit.headers, true) ?? hit.headers,
      });
    }
    const header = (name: string) => c.req.header(name);
    const direct = await mcp.direct(header, caller, body);
    if (direct !== null) return c.body(direct, 200, { 'content-type': 'application/json' });
    return mcp.handle(c.req.raw, caller, body);
  });
}

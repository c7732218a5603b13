import { createRoute, type OpenAPIHono, type RouteConfig, type RouteHandler, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { type OperationId, operation } from '../../access/policy.js';
import { QUERIES } from '../../contracts/queries.js';
import type { AppEnv } from '../context.js';
import { checkAccess, checkFeed, viewerOf } from '../guard.js';
import { errorResponses, type RouteDeps } from './shared.js';

/**
 * What a route file gives: a summary, the schema of its request and of its 200 answer, the error
 * answers of its own, and the handler. Operation id, method, path, access (and so the security
 * of the OpenAPI operation and the errors of its access level) come from the access table.
 */
export interface RouteSpec {
  summary: string;
  request?: RouteConfig['request'];
  /** The 200 answer. */
  ok: { description: string; content: Record<string, { schema: z.ZodType }> };
  /** Error answers besides those of the access level, by status (a status given here replaces the level's). */
  errors?: Record<number, string>;
}

/** The route config a spec becomes (what types the handler's input and answers). */
export type DefinedRoute<S extends RouteSpec> = {
  method: 'get' | 'post';
  path: string;
  request: S['request'];
  responses: { 200: S['ok'] } & ReturnType<typeof errorResponses>;
};

/**
 * The query of an operation that takes its parameters in a JSON body (a POST): none. A parameter
 * in its URL is refused, naming it, as an unknown one of a GET is, rather than ignored.
 */
const NO_QUERY = z.object({}).strict();

/**
 * Registers the operation `id` of the access table on `app`: its method and path, its access
 * check, and the caller's viewer and the services put in the context (`c.get('viewer')`,
 * `c.get('services')`) once it may go on.
 */
export function defineRoute<const S extends RouteSpec>(
  app: OpenAPIHono<AppEnv>,
  deps: RouteDeps,
  id: OperationId,
  spec: S,
  handler: RouteHandler<DefinedRoute<S>, AppEnv>,
): void {
  const op = operation(id);
  // The query is the operation's own, which the price of a call reads too.
  if (spec.request?.query !== (QUERIES as Partial<Record<OperationId, z.ZodType>>)[id])
    throw new Error(`${id}: its query must be QUERIES.${id} (src/contracts/queries.ts)`);
  const query = spec.request?.query ?? (op.method === 'POST' ? NO_QUERY : undefined);
  const what = `${op.method} /v1${op.path}`;
  const guard: MiddlewareHandler<AppEnv> = async (c, next) => {
    if (op.feed) checkFeed(c, op.access, deps.edition, deps.publicUrl, what);
    else checkAccess(c, op.access, deps.edition, deps.publicUrl, what, op);
    c.set('viewer', viewerOf(c, deps.edition, deps.publicUrl));
    c.set('services', deps);
    await next();
  };
  const route = createRoute({
    operationId: op.id,
    method: op.method === 'GET' ? 'get' : 'post',
    path: op.path,
    summary: spec.summary,
    // Public operations take no credentials or the bearer; the others the bearer. A feed takes no
    // header (its token is its token= parameter: the document keeps its one scheme, the bearer).
    security: op.access === 'public' || op.feed ? [{}, { bearer: [] }] : [{ bearer: [] }],
    middleware: [guard] as const,
    ...(spec.request || query ? { request: { ...spec.request, ...(query ? { query } : {}) } } : {}),
    responses: {
      200: spec.ok,
      ...errorResponses(op.feed ? 'feed' : op.access === 'public' ? 'public' : 'keyed', spec.errors),
    },
  });
  const routing = routingPath(op.path);
  if (routing === op.path) {
    app.openapi(route, handler as never);
    return;
  }
  // The document keeps the template ({symbol}.svg); the router gets the pattern.
  const { middleware: _, ...documented } = route;
  app.openAPIRegistry.registerPath(documented);
  app.openapi({ ...route, path: routing, hide: true }, handler as never);
}

/**
 * The path the router takes for a template. A parameter followed by a suffix in its segment
 * ({symbol}.svg) is one Hono would name `symbol.svg` and match without the suffix, so it becomes a
 * pattern over the whole segment ending in the suffix ({symbol{[^\x2F]+\.svg}}: no literal '/',
 * which would split the segment), and the parameter's schema drops the suffix (contracts/badges.ts).
 */
function routingPath(path: string): string {
  return path.replace(/\{(\w+)\}\.(\w+)(?=\/|$)/g, '{$1{[^\\x2F]+\\.$2}}');
}

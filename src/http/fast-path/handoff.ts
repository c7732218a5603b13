/**
 * What the fast path (fast-path.ts) and the app's middleware chain (../middleware.ts) hand each
 * other: the response the fast path writes as it is, the small context the chain runs on there,
 * and the request the fast path hands on to Hono with how far the middleware got.
 */
import type { Context } from 'hono';

/**
 * A response written by the fast path (fast-path.ts) as it is: status, plain headers and bytes, with no
 * Response object between (the response cache's answers, when the request came through it).
 */
export class FastPathResponse {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: Uint8Array | null,
  ) {}
}

/** What the fast path's context gives the chain: its variables, its response, and the Node request. */
export interface FastPathRunContext {
  vars: Map<string, unknown>;
  res: Response | undefined;
  env: { incoming: object };
}

/** Runs the middleware on the fast path's context: its response, or null once handed on to Hono. */
export type FastPathRun = (
  c: FastPathRunContext,
) => FastPathResponse | null | Promise<FastPathResponse | null>;

/** Where the fast path leaves a request it hands on: on the Node request, which Hono's context carries. */
const HANDOFF = Symbol('pipelineHandoff');
interface Handoff {
  vars: Map<string, unknown>;
  entered: number;
  failed: boolean;
  error: unknown;
  answer: Response | undefined;
}
type WithHandoff = { [HANDOFF]?: Handoff | undefined };

/** Leaves the request for Hono's chain to resume after the first `entered` middleware; null. */
export function handOn(
  c: FastPathRunContext,
  entered: number,
  failed: boolean,
  error?: unknown,
  answer?: Response,
): null {
  (c.env.incoming as WithHandoff)[HANDOFF] = { vars: c.vars, entered, failed, error, answer };
  return null;
}

/** What the fast path left on this request, taken once (so no middleware runs twice). */
export function takeHandoff(c: Context): Handoff | undefined {
  const incoming = (c.env as { incoming?: WithHandoff } | undefined)?.incoming;
  const handoff = incoming?.[HANDOFF];
  if (handoff) incoming[HANDOFF] = undefined;
  return handoff;
}

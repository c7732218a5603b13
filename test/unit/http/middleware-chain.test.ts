import { Hono, type MiddlewareHandler } from 'hono';
import { describe, expect, it } from 'vitest';
import { FastPathResponse, type FastPathRunContext } from '../../../src/http/fast-path/handoff.js';
import { type Middleware, middlewareChain } from '../../../src/http/middleware.js';

/**
 * A middleware chain answers as the same middleware mounted one by one in Hono: checked
 * side by side on one script of steps that answer early, throw before or after the handler, or wait.
 */
type Script = { answerAt?: number; throwAt?: number; throwOnExitAt?: number; handlerThrows?: boolean };

function steps(script: Script, trace: string[]): Middleware[] {
  return [0, 1, 2].map((i) => ({
    enter: async (c) => {
      trace.push(`enter ${i}`);
      if (script.throwAt === i) throw new Error(`enter ${i} failed`);
      if (script.answerAt === i) return c.text(`answered by ${i}`, 202);
      return i === 1 ? await Promise.resolve(undefined) : undefined;
    },
    exit: (c) => {
      trace.push(`exit ${i} saw ${c.res.status}`);
      if (script.throwOnExitAt === i) throw new Error(`exit ${i} failed`);
      c.res.headers.append('x-exits', String(i));
    },
  }));
}

/** The same step as a Hono middleware, as the app mounted them before the chain. */
function asMiddleware(step: Middleware): MiddlewareHandler {
  return async (c, next) => {
    const answer = await step.enter?.(c);
    if (answer) return answer;
    await next();
    await step.exit?.(c);
  };
}

function app(script: Script, trace: string[], mount: 'pipeline' | 'middlewares'): Hono {
  return withHandler(
    mount === 'pipeline'
      ? [middlewareChain(steps(script, trace), onError)]
      : steps(script, trace).map((step) => asMiddleware(step)),
    script,
    trace,
  );
}

const scripts: Script[] = [
  {},
  { answerAt: 0 },
  { answerAt: 2 },
  { throwAt: 0 },
  { throwAt: 1 },
  { throwAt: 2 },
  { handlerThrows: true },
  { throwOnExitAt: 1 },
  { throwOnExitAt: 0 },
  { throwAt: 2, throwOnExitAt: 1 },
];

/** The same steps run in the same order, and the same answer (status, body, exits seen). */
async function expectSame(
  got: { res: Response; trace: string[] },
  want: { res: Response; trace: string[] },
): Promise<void> {
  expect(got.trace).toEqual(want.trace);
  expect(got.res.status).toBe(want.res.status);
  expect(await got.res.text()).toBe(await want.res.text());
  expect(got.res.headers.get('x-exits')).toBe(want.res.headers.get('x-exits'));
}

describe('middleware chain', () => {
  it.each(scripts)('answers %j as the same steps mounted one by one', async (script) => {
    const got: string[] = [];
    const want: string[] = [];
    const a = await app(script, got, 'pipeline').request('/x');
    const b = await app(script, want, 'middlewares').request('/x');
    await expectSame({ res: a, trace: got }, { res: b, trace: want });
  });

  it('runs no later step, no handler and not its own exit after a step answers', async () => {
    const trace: string[] = [];
    const res = await app({ answerAt: 1 }, trace, 'pipeline').request('/x');
    expect(res.status).toBe(202);
    expect(trace).toEqual(['enter 0', 'enter 1', 'exit 0 saw 202']);
  });

  it('answers a thrown non-Error (a worker error crossing the thread) with onError, and runs the exits', async () => {
    const trace: string[] = [];
    const a = new Hono();
    a.use('*', middlewareChain(steps({}, trace), onError));
    a.get('/x', () => {
      trace.push('handler');
      throw { code: 'SQLITE_CORRUPT' };
    });
    const res = await a.request('/x');
    expect(res.status).toBe(500);
    expect(await res.text()).toMatch(/SQLITE_CORRUPT/);
    expect(trace.filter((t) => t.startsWith('exit'))).toEqual([
      'exit 2 saw 500',
      'exit 1 saw 500',
      'exit 0 saw 500',
    ]);
  });

  // The fast path (fast-path.ts) runs the middleware on its own context and hands the request on
  // to Hono where it stopped: together they run each one once, as the chain alone does.
  it.each(scripts.filter((s) => s.answerAt === undefined))(
    'answers %j through the fast path and Hono as the steps mounted one by one',
    async (script) => {
      const got: string[] = [];
      const want: string[] = [];
      const steps_ = middlewareChain(steps(script, got), onError);
      const a = withHandler([steps_], script, got);
      const c = frontContext();
      expect(await steps_.fastPath(c)).toBeNull();
      const res = await a.request('/x', {}, c.env);
      const b = await app(script, want, 'middlewares').request('/x');
      await expectSame({ res, trace: got }, { res: b, trace: want });
    },
  );

  it("writes the fast path's own answer after the earlier steps' exits, without Hono", async () => {
    const trace: string[] = [];
    const answer = new FastPathResponse(200, { 'x-a': '1' }, null);
    const fastPath = middlewareChain([
      { enter: () => void trace.push('enter 0'), exit: (c) => void trace.push(`exit 0 saw ${c.res.status}`) },
      {
        enter: async () => {
          trace.push('enter 1');
          return answer as unknown as Response;
        },
      },
      { enter: () => void trace.push('enter 2') },
    ]).fastPath;
    expect(await fastPath(frontContext())).toBe(answer);
    expect(trace).toEqual(['enter 0', 'enter 1', 'exit 0 saw 200']);
  });
});

const onError = (e: Error, c: Parameters<MiddlewareHandler>[0]) => c.text(`error: ${e.message}`, 500);

/** The middlewares, then a handler at /x that the script may make throw. */
function withHandler(middlewares: MiddlewareHandler[], script: Script, trace: string[]): Hono {
  const a = new Hono();
  for (const m of middlewares) a.use('*', m);
  a.get('/x', (c) => {
    trace.push('handler');
    if (script.handlerThrows) throw new Error('handler failed');
    return c.text('ok');
  });
  a.onError(onError);
  return a;
}

function frontContext(): FastPathRunContext & { get(n: string): unknown; set(n: string, v: unknown): void } {
  const vars = new Map<string, unknown>();
  return {
    vars,
    res: undefined,
    env: { incoming: {} },
    get: (n) => vars.get(n),
    set: (n, v) => void vars.set(n, v),
  };
}

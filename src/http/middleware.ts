import type { Context, ErrorHandler, MiddlewareHandler } from 'hono';
import {
  FastPathResponse,
  type FastPathRun,
  type FastPathRunContext,
  handOn,
  takeHandoff,
} from './fast-path/handoff.js';

/**
 * One middleware of the work every request passes through (request id, CORS, metrics, snapshot,
 * authentication, rate limit, response cache...), split at the point where a Hono middleware
 * would call `await next()`:
 * - `enter` runs before the handler; a Response it returns is the answer, and neither the later
 *   middleware nor the handler run (nor this middleware's `exit`);
 * - `exit` runs once the answer is made (an error answer too), in reverse order, for every
 *   middleware whose `enter` ran to the end without answering.
 * Either may return a promise; one that keeps something between the two keeps it in the context.
 */
export interface Middleware<C extends Context = Context> {
  enter?(c: C): Response | undefined | Promise<Response | undefined>;
  exit?(c: C): void | Promise<void>;
}

/**
 * The middleware as one Hono middleware, with the same outcome as mounting each on its own in
 * this order: an error thrown by one (or by the handler) becomes the answer `onError` makes of it
 * there, and the middleware outside it still finishes. Why: each Hono middleware costs an async
 * function, a promise and a closure per request (ten were about 7 µs of a cached answer's 40,
 * measured); here one that has nothing to wait for costs a plain call.
 *
 * Without `onError` (a single middleware mounted alone) an error is thrown to Hono, which answers
 * it at this middleware as it would any other.
 */
export function middlewareChain<C extends Context>(
  chain: readonly Middleware<C>[],
  onError?: ErrorHandler,
): MiddlewareHandler & { fastPath: FastPathRun } {
  const enters = chain.map((m) => m.enter?.bind(m));
  const exits = chain.map((m) => m.exit?.bind(m));
  const fail = async (c: Context, thrown: unknown): Promise<void> => {
    if (!onError) throw thrown;
    // A thrown value that is not an Error (a worker's error crossing the thread arrives as a plain
    // object) is answered and logged like any other: past here, Hono and the node adapter would
    // answer it as an unparseable request (400), outside the request log.
    const error = thrown instanceof Error ? thrown : asError(thrown);
    c.error = error;
    c.res = await onError(error, c);
  };
  const finish = async (c: C, entered: number): Promise<void> => {
    for (let i = entered - 1; i >= 0; i--) {
      const exit = exits[i];
      if (!exit) continue;
      try {
        const done = exit(c);
        if (done instanceof Promise) await done;
      } catch (error) {
        await fail(c, error);
      }
    }
  };
  const middleware: MiddlewareHandler = async (c, next) => {
    const ctx = c as C;
    let entered = 0;
    const handoff = takeHandoff(c);
    try {
      if (handoff) {
        // The fast path (fast-path/fast-path.ts) ran the middleware up to `entered` on its own context: carry on.
        for (const [name, value] of handoff.vars) c.set(name as never, value as never);
        entered = handoff.entered;
        if (handoff.failed) throw handoff.error;
        if (handoff.answer) {
          if (!c.finalized) c.res = handoff.answer;
          return finish(ctx, entered);
        }
      }
      for (; entered < enters.length; entered++) {
        const enter = enters[entered];
        if (!enter) continue;
        let answer = enter(ctx);
        if (answer instanceof Promise) answer = await answer;
        if (answer) {
          if (!c.finalized) c.res = answer;
          return finish(ctx, entered);
        }
      }
      await next();
    } catch (error) {
      await fail(c, error);
    }
    return finish(ctx, entered);
  };
  // The same middleware on the fast path's context: its response once every exit ran, or null
  // when the request was handed on (one threw, or none answered) for the middleware above to finish.
  const fastPathFrom = (
    c: FastPathRunContext,
    start: number,
  ): FastPathResponse | null | Promise<FastPathResponse | null> => {
    for (let i = start; i < enters.length; i++) {
      const enter = enters[i];
      if (!enter) continue;
      let answer: Response | undefined | Promise<Response | undefined>;
      try {
        answer = enter(c as unknown as C);
      } catch (error) {
        return handOn(c, i, true, error);
      }
      if (answer instanceof Promise)
        return answer.then(
          (a) => (a ? fastPathAnswered(c, i, a) : fastPathFrom(c, i + 1)),
          (error: unknown) => handOn(c, i, true, error),
        );
      if (answer) return fastPathAnswered(c, i, answer);
    }
    return handOn(c, enters.length, false);
  };
  const fastPathAnswered = (
    c: FastPathRunContext,
    entered: number,
    answer: Response,
  ): FastPathResponse | null | Promise<FastPathResponse> => {
    // The fast path writes only a response made for it (the response cache's); Hono writes any other.
    if (!(answer instanceof FastPathResponse)) return handOn(c, entered, false, undefined, answer);
    c.res = answer as unknown as Response;
    return fastPathExits(c, entered, answer);
  };
  const fastPathExits = (
    c: FastPathRunContext,
    from: number,
    answer: FastPathResponse,
  ): FastPathResponse | Promise<FastPathResponse> => {
    for (let i = from - 1; i >= 0; i--) {
      const exit = exits[i];
      if (!exit) continue;
      const done = exit(c as unknown as C);
      if (done instanceof Promise) return done.then(() => fastPathExits(c, i, answer));
    }
    return answer;
  };
  return Object.assign(middleware, { fastPath: (c: FastPathRunContext) => fastPathFrom(c, 0) });
}

/** A Hono middleware that does all its work before calling next() (e.g. hono/body-limit), split. */
export function beforeNext(middleware: MiddlewareHandler): Middleware {
  const next = async () => {};
  return { enter: async (c) => (await middleware(c, next)) ?? undefined };
}

/** A Hono middleware that does all its work after next() returns (e.g. headers on pages), split. */
export function afterNext(middleware: MiddlewareHandler): Middleware {
  const next = async () => {};
  return {
    exit: async (c) => {
      await middleware(c, next);
    },
  };
}

/** The middleware, for the requests `applies` to only (the same answer for a request's enter and exit). */
export function onlyFor<C extends Context>(
  applies: (c: C) => boolean,
  chain: readonly Middleware<C>[],
): Middleware<C>[] {
  return chain.map((m) => {
    const enter = m.enter?.bind(m);
    const exit = m.exit?.bind(m);
    return {
      ...(enter ? { enter: (c: C) => (applies(c) ? enter(c) : undefined) } : {}),
      ...(exit ? { exit: (c: C) => (applies(c) ? exit(c) : undefined) } : {}),
    };
  });
}

/** A thrown non-Error as an Error, keeping its message and code (onError reads SQLite's codes). */
function asError(thrown: unknown): Error {
  const o = thrown as { message?: unknown; code?: unknown } | null;
  let text: string;
  try {
    text = JSON.stringify(thrown) ?? String(thrown);
  } catch {
    text = String(thrown);
  }
  const error = new Error(typeof o?.message === 'string' ? o.message : `non-Error thrown: ${text}`);
  return typeof o?.code === 'string' ? Object.assign(error, { code: o.code }) : error;
}

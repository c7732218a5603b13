/**
 * 405 for a known path asked with a method it is not served with (RFC 9110 section 15.5.6): the
 * Allow header lists the methods it is (HEAD with GET, as Hono answers HEAD from the GET route).
 * Read from the app's own route table, so a new route needs nothing here.
 */
import { ServiceError } from '../core/errors.js';

interface RouteEntry {
  method: string;
  path: string;
}

/** The order Allow lists methods in (any other method last). */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

interface CompiledRoute {
  method: string;
  pattern: RegExp;
}

/** A Hono path (`/v1/elements/:symbol`, `:id{[0-9]+}`) as an anchored pattern. */
function compile(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => {
      const param = /^:[^{]+(?:\{(.+)\})?\??$/.exec(segment);
      if (param) return param[1] ? `(?:${param[1]})` : '[^/]+';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}/?$`);
}

export function methodsByPath(routes: readonly RouteEntry[]): (path: string) => string[] {
  let compiled: CompiledRoute[] | null = null;
  return (path) => {
    // Compiled on first use, once every route is registered. Middleware (ALL, wildcards) is not a route.
    compiled ??= routes
      .filter((r) => r.method !== 'ALL' && !r.path.includes('*'))
      .map((r) => ({ method: r.method, pattern: compile(r.path) }));
    const methods = new Set(compiled.filter((r) => r.pattern.test(path)).map((r) => r.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
  };
}

export function methodNotAllowed(method: string, path: string, allowed: string[]): ServiceError {
  return new ServiceError(
    'method_not_allowed',
    `${method} is not served at ${path}; it answers ${allowed.join(', ')}.`,
    { allowed },
    { allow: allowed.join(', ') },
  );
}

import type { MiddlewareHandler } from 'hono';

/**
 * Headers for every page: scripts and styles only from this server (no inline script, no inline
 * style attribute), no framing, no Referer to other sites (a sign-in link's token must not leave in one; same-origin,
 * not no-referrer, which would make browsers send `Origin: null` on our own forms), and
 * HSTS when the public address is https. Only HTML answers carry them: the API's JSON is not a page.
 */
export function securityHeaders(publicUrl: string): MiddlewareHandler {
  const https = publicUrl.startsWith('https://');
  const csp = [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
  return async (c, next) => {
    await next();
    const h = c.res.headers;
    if (!(h.get('content-type') ?? '').startsWith('text/html')) return;
    h.set('content-security-policy', csp);
    h.set('x-content-type-options', 'nosniff');
    h.set('x-frame-options', 'DENY');
    h.set('referrer-policy', 'same-origin');
    h.set('cross-origin-opener-policy', 'same-origin');
    if (https) h.set('strict-transport-security', 'max-age=31536000');
  };
}

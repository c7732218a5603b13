import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { StateStore, WebSession } from '../access/state-store.js';

const SESSION_COOKIE = 'ri_session';
/** The form token of a visitor not signed in (double-submit: the cookie and the form must match). */
const FORM_COOKIE = 'ri_form';
const SESSION_TTL_MS = 30 * 24 * 60 * 60 * 1000;
const FORM_COOKIE_SECONDS = 2 * 60 * 60;

/** 256 random bits, URL-safe: session ids, sign-in tokens and form tokens. */
export const newToken = (): string => randomBytes(32).toString('base64url');
/** Secrets are stored and looked up by their sha256, never as they are. */
export const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/**
 * Web sessions: a random id in an HttpOnly, SameSite=Lax cookie (Secure when PUBLIC_URL is
 * https), stored by its hash in the state store, so every replica knows it. Each session has its
 * own CSRF token, which every form of a signed-in page carries; a visitor not yet signed in gets a
 * form cookie instead. Forms are also refused when their Origin is another site's.
 */
export class WebSessions {
  private readonly found = new WeakMap<Request, Promise<WebSession | null>>();
  private readonly secure: boolean;
  private readonly origin: string;

  constructor(
    private readonly state: StateStore,
    publicUrl: string,
  ) {
    this.secure = publicUrl.startsWith('https://');
    this.origin = new URL(publicUrl).origin;
  }

  /** The signed-in session of this request, or null (read once per request). */
  current(c: Context): Promise<WebSession | null> {
    let found = this.found.get(c.req.raw);
    if (!found) {
      const id = getCookie(c, SESSION_COOKIE);
      found = id && id.length <= 100 ? this.state.findSession(sha256(id)) : Promise.resolve(null);
      this.found.set(c.req.raw, found);
    }
    return found;
  }

  async start(c: Context, accountId: string): Promise<void> {
    const id = newToken();
    const expiresAt = new Date(Date.now() + SESSION_TTL_MS);
    await this.state.createSession({
      idHash: sha256(id),
      accountId,
      csrf: newToken(),
      expiresAt: expiresAt.toISOString(),
    });
    setCookie(c, SESSION_COOKIE, id, this.cookie(SESSION_TTL_MS / 1000));
    deleteCookie(c, FORM_COOKIE, { path: '/', secure: this.secure });
  }

  async end(c: Context): Promise<void> {
    const id = getCookie(c, SESSION_COOKIE);
    if (id) await this.state.deleteSession(sha256(id));
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure: this.secure });
  }

  /** The token this request's forms carry: the session's, or the form cookie's (set when missing). */
  formToken(c: Context, session: WebSession | null): string {
    if (session) return session.csrf;
    let token = getCookie(c, FORM_COOKIE);
    if (!token || token.length > 100) {
      token = newToken();
      setCookie(c, FORM_COOKIE, token, this.cookie(FORM_COOKIE_SECONDS));
    }
    return token;
  }

  /** Whether a posted form may act: same origin (when the browser says), and the right token. */
  formAllowed(c: Context, session: WebSession | null, token: unknown): boolean {
    const origin = c.req.header('origin');
    if (origin && origin !== this.origin && origin !== new URL(c.req.url).origin) return false;
    if (c.req.header('sec-fetch-site') === 'cross-site') return false;
    if (typeof token !== 'string') return false;
    const expected = session ? session.csrf : getCookie(c, FORM_COOKIE);
    return expected !== undefined && sameToken(token, expected);
  }

  private cookie(maxAgeSeconds: number) {
    return {
      path: '/',
      httpOnly: true,
      secure: this.secure,
      sameSite: 'Lax' as const,
      maxAge: Math.floor(maxAgeSeconds),
    };
  }
}

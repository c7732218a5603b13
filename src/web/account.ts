import type { Context, Env, Hono } from 'hono';
import { planLadder } from '../access/policy.js';
import type { RateLimiter } from '../access/rate-limiter.js';
import {
  AccountExistsError,
  type FeedTokenInfo,
  normaliseEmail,
  type StateStore,
  type WebSession,
} from '../access/state-store.js';
import { monthOf, type UsageCounter } from '../access/usage-counter.js';
import {
  DELIVERY_LOG_LENGTH,
  registerAccountWebhooks,
  type WebhookNotice,
  type WebhookPageDeps,
  webhookSection,
} from './account-webhooks.js';
import { type Html, html, type Site } from './html.js';
import type { Mailer } from './mailer.js';
import { countText } from './numbers.js';
import { newToken, sha256, type WebSessions } from './session.js';

export interface AccountDeps extends WebhookPageDeps {
  site: Site;
  state: StateStore;
  sessions: WebSessions;
  mailer: Mailer;
  limiter: RateLimiter;
  usage: UsageCounter;
  publicUrl: string;
  edition: 'full' | 'enterprise';
  /** The client address, as the rate limits see it (proxy trust applied). */
  clientIp: (c: Context) => string;
  log: (msg: string, fields?: Record<string, unknown>) => void;
}

/** How long a sign-in link works (once). */
const SIGN_IN_TTL_MS = 15 * 60 * 1000;
/** Sign-in mails asked for, per address and per client address, each hour. */
export const SIGN_IN_LIMITS = { perEmail: 5, perIp: 20 };
const KEY_NAME_MAX = 60;
/** An address the pages take (sign-in, plan requests): one @, a dot in the domain, no spaces or brackets. */
export const EMAIL = /^[^\s@<>()",;]{1,64}@[^\s@<>()",;]+\.[^\s@<>()",;]+$/;

export const PRIVATE = { 'cache-control': 'no-store' };

/** A form whose mail could not be sent (the cause is logged by the caller): 503, try again later. */
export function mailNotSent(c: Context, site: Site, title: string, heading: string): Response {
  return c.html(site.page(title, html`<h1>${heading}</h1><p>Please try again in a few minutes.</p>`), 503, {
    ...PRIVATE,
    'retry-after': '60',
  });
}

/**
 * The account page: sign in by an emailed link (no password), a free account made at the first
 * sign-in, keys created (shown once), named and revoked, and this month's calls per key. Every
 * answer is private and never cached; every form carries a CSRF token.
 */
export function registerAccount<E extends Env>(app: Hono<E>, deps: AccountDeps): void {
  const { sessions, state } = deps;

  app.get('/account', async (c) => {
    const session = await sessions.current(c);
    if (!session) return c.html(signInPage(deps, sessions.formToken(c, null)), 200, PRIVATE);
    return c.html(await accountPage(deps, session), 200, PRIVATE);
  });

  app.post('/account/sign-in', async (c) => {
    const form = await readForm(c);
    const session = await sessions.current(c);
    if (!sessions.formAllowed(c, session, form.csrf)) return formExpired(c, deps.site);
    const email = typeof form.email === 'string' ? normaliseEmail(form.email) : '';
    if (email.length > 254 || !EMAIL.test(email))
      return c.html(
        signInPage(deps, sessions.formToken(c, session), 'That does not look like an email address.'),
        400,
        PRIVATE,
      );
    const hour = 3600;
    const [byEmail, byIp] = await Promise.all([
      deps.limiter.hit(`signin:email:${sha256(email)}`, SIGN_IN_LIMITS.perEmail, hour),
      deps.limiter.hit(`signin:ip:${deps.clientIp(c)}`, SIGN_IN_LIMITS.perIp, hour),
    ]);
    const refused = !byEmail.allowed ? byEmail : !byIp.allowed ? byIp : null;
    if (refused) deps.log('sign-in mail refused: hourly limit', { by: !byEmail.allowed ? 'email' : 'ip' });
    if (refused)
      return c.html(
        deps.site.page(
          'Too many sign-in requests',
          html`<h1>Too many sign-in requests</h1><p>Try again in ${Math.ceil(refused.resetSeconds / 60)} minutes.</p>`,
        ),
        429,
        { ...PRIVATE, 'retry-after': String(refused.resetSeconds) },
      );
    const token = newToken();
    await state.saveSignInToken(sha256(token), email, new Date(Date.now() + SIGN_IN_TTL_MS).toISOString());
    const link = `${deps.publicUrl}/account/verify?token=${token}`;
    try {
      await deps.mailer.send({
        to: email,
        subject: 'Your sign-in link for Research Intensity',
        text: `Open this link to sign in (it works once, for ${SIGN_IN_TTL_MS / 60_000} minutes):\n\n${link}\n\nIf you did not ask for it, ignore this mail: nothing happens without the link.\n`,
      });
    } catch (error) {
      // The cause for the operator; never the address or the link.
      deps.log('sign-in mail failed', { err: (error as Error).message });
      return mailNotSent(c, deps.site, 'Mail not sent', 'The mail could not be sent');
    }
    // The same answer whether or not an account exists: the page tells no one who has one.
    return c.html(
      deps.site.page(
        'Check your mail',
        html`<h1>Check your mail</h1><p>A sign-in link is on its way to <strong>${email}</strong>. It works once, within ${SIGN_IN_TTL_MS / 60_000} minutes. No account yet? The link makes a free one.</p>`,
      ),
      200,
      PRIVATE,
    );
  });

  // Opening the link only shows a button: mail scanners that fetch links must not use it up.
  app.get('/account/verify', async (c) => {
    const token = c.req.query('token') ?? '';
    const session = await sessions.current(c);
    return c.html(
      deps.site.page(
        'Sign in',
        html`<h1>Sign in</h1>
<form method="post" action="/account/verify"><input type="hidden" name="token" value="${token}"><input type="hidden" name="csrf" value="${sessions.formToken(c, session)}">
<button type="submit">Sign in to Research Intensity</button></form>`,
      ),
      200,
      PRIVATE,
    );
  });

  app.post('/account/verify', async (c) => {
    const form = await readForm(c);
    const current = await sessions.current(c);
    if (!sessions.formAllowed(c, current, form.csrf)) return formExpired(c, deps.site);
    const token = typeof form.token === 'string' && form.token.length <= 100 ? form.token : '';
    const email = token ? await state.takeSignInToken(sha256(token)) : null;
    if (!email)
      return c.html(
        signInPage(
          deps,
          sessions.formToken(c, current),
          'That sign-in link has expired or was used already. Ask for a new one below.',
        ),
        400,
        PRIVATE,
      );
    const account = await findOrCreateAccount(state, email);
    if (current) await sessions.end(c);
    await sessions.start(c, account.id);
    return c.redirect('/account', 303);
  });

  app.post('/account/keys', async (c) => {
    const form = await readForm(c);
    const session = await sessions.current(c);
    if (!session) return c.redirect('/account', 303);
    if (!sessions.formAllowed(c, session, form.csrf)) return formExpired(c, deps.site);
    const name = typeof form.name === 'string' ? form.name.trim().slice(0, KEY_NAME_MAX) : '';
    const created = await state.createKey(session.accountId, name || null);
    return c.html(await accountPage(deps, session, created), 201, PRIVATE);
  });

  /**
   * POST `${base}/:prefix/revoke`. Revoking cannot be undone: the first press asks (a page saying
   * what stops working), the confirming form revokes.
   */
  const revokeRoute = (
    base: string,
    title: string,
    ask: (prefix: string, accountId: string) => Promise<Html | undefined>,
    revoke: (prefix: string, accountId: string) => Promise<unknown>,
  ) =>
    app.post(`${base}/:prefix/revoke`, async (c) => {
      const form = await readForm(c);
      const session = await sessions.current(c);
      if (!session) return c.redirect('/account', 303);
      if (!sessions.formAllowed(c, session, form.csrf)) return formExpired(c, deps.site);
      const prefix = c.req.param('prefix');
      if (form.confirm !== 'yes') {
        const question = await ask(prefix, session.accountId);
        if (!question) return c.redirect('/account', 303);
        return c.html(
          deps.site.page(
            title,
            html`${question}
<form class="stack" method="post" action="${base}/${prefix}/revoke"><input type="hidden" name="csrf" value="${session.csrf}"><input type="hidden" name="confirm" value="yes"><button type="submit">Yes, revoke it</button></form>
<p><a href="/account">No, keep it</a></p>`,
          ),
          200,
          PRIVATE,
        );
      }
      await revoke(prefix, session.accountId);
      return c.redirect('/account', 303);
    });

  revokeRoute(
    '/account/keys',
    'Revoke a key',
    async (prefix, accountId) => {
      const key = (await state.listKeys({ accountId })).find((k) => k.prefix === prefix && !k.revokedAt);
      return key
        ? html`<h1>Revoke key ${key.name ?? prefix}?</h1>
<p>Calls with <code>ri_${prefix}_…</code> are refused from the moment it is revoked, by every replica. This cannot be undone; a new key can be made at any time.</p>`
        : undefined;
    },
    (prefix, accountId) => state.revokeKey(prefix, accountId),
  );

  app.post('/account/feed-tokens', async (c) => {
    const form = await readForm(c);
    const session = await sessions.current(c);
    if (!session) return c.redirect('/account', 303);
    if (!sessions.formAllowed(c, session, form.csrf)) return formExpired(c, deps.site);
    const created = await state.createFeedToken(session.accountId);
    return c.html(await accountPage(deps, session, undefined, created), 201, PRIVATE);
  });

  revokeRoute(
    '/account/feed-tokens',
    'Revoke a feed token',
    async (prefix, accountId) => {
      const token = (await state.listFeedTokens(accountId)).find((t) => t.prefix === prefix && !t.revokedAt);
      return token
        ? html`<h1>Revoke feed token rif_${prefix}_…?</h1>
<p>Every feed address holding it is refused from the moment it is revoked, by every replica: feed readers that use it stop receiving. This cannot be undone; a new token can be made at any time.</p>`
        : undefined;
    },
    (prefix, accountId) => state.revokeFeedToken(prefix, accountId),
  );

  registerAccountWebhooks(
    app,
    deps,
    async (c) => {
      const form = await readForm(c);
      const session = await sessions.current(c);
      if (!session) return c.redirect('/account', 303);
      if (!sessions.formAllowed(c, session, form.csrf)) return formExpired(c, deps.site);
      return { session, form };
    },
    async (c, session, notice, status) =>
      c.html(await accountPage(deps, session, undefined, undefined, notice), status, PRIVATE),
  );

  app.post('/account/sign-out', async (c) => {
    const form = await readForm(c);
    const session = await sessions.current(c);
    if (session && !sessions.formAllowed(c, session, form.csrf)) return formExpired(c, deps.site);
    await sessions.end(c);
    return c.redirect('/account', 303);
  });
}

async function findOrCreateAccount(state: StateStore, email: string) {
  const found = await state.findAccountByEmail(email);
  if (found) return found;
  try {
    return await state.createAccount({ email, plan: 'free' });
  } catch (error) {
    // Two first sign-ins at once (two tabs, two replicas): the other one made it.
    if (error instanceof AccountExistsError) return (await state.findAccountByEmail(email))!;
    throw error;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: any route's context
export async function readForm(c: Context<any, any, any>): Promise<Record<string, unknown>> {
  const type = c.req.header('content-type') ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/form-data'))
    return {};
  try {
    return (await c.req.parseBody()) as Record<string, unknown>;
  } catch {
    return {};
  }
}

// biome-ignore lint/suspicious/noExplicitAny: any route's context
export function formExpired(c: Context<any, any, any>, site: Site) {
  return c.html(
    site.page(
      'Form expired',
      html`<h1>This form has expired</h1><p>For your safety the form was not accepted (it was old, or sent from another site). <a href="/account">Open the account page</a> and try again.</p>`,
    ),
    403,
    PRIVATE,
  );
}

function signInPage(deps: AccountDeps, csrf: string, problem?: string) {
  const { edition } = deps;
  return deps.site.page(
    'Account',
    html`<h1>Account and API keys</h1>
${problem ? html`<p class="problem" role="alert">${problem}</p>` : html``}
<p>Sign in with your email address: we send you a link that signs you in (no password). The first sign-in makes a free account, from which you create your API keys.</p>
<form class="stack" method="post" action="/account/sign-in">
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254">
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit">Email me a sign-in link</button>
</form>
<p>A free key opens element history and subject search; ${edition === 'full' ? 'the Personal and Professional plans open' : 'the Enterprise plan opens'} the rest (<a href="/pricing">pricing</a>). Keys are sent as <code>Authorization: Bearer &lt;API_KEY&gt;</code>.</p>
<p>The current element scores need no key: <a href="/">the periodic table</a>, <a href="/v1/elements">/v1/elements</a>.</p>`,
  );
}

async function accountPage(
  deps: AccountDeps,
  session: WebSession,
  created?: { key: string; prefix: string },
  createdFeed?: { token: string; prefix: string },
  webhookNotice: WebhookNotice = {},
) {
  // This process's calls not yet written are written first, so the page is up to date.
  await deps.usage.flush().catch(() => undefined);
  const month = monthOf(new Date());
  const [keys, usage, feedTokens, subscriptions, attempts] = await Promise.all([
    deps.state.listKeys({ accountId: session.accountId }),
    deps.state.usage(session.accountId, month),
    deps.state.listFeedTokens(session.accountId),
    deps.state.listWebhookSubscriptions(session.accountId),
    deps.state.webhookAttempts(session.accountId, DELIVERY_LOG_LENGTH),
  ]);
  const csrf = session.csrf;
  const ladder = planLadder(deps.edition);
  return deps.site.page(
    'Account',
    html`<h1>Your account</h1>
<p>Signed in as <strong>${session.email}</strong>. Plan: <strong>${session.plan}</strong>${session.plan === ladder[ladder.length - 1] ? '' : html` (<a href="/pricing">plans</a>)`}.</p>
${
  created
    ? html`<div class="newkey" role="status"><h2>Your new key</h2><p>Copy it now: it is shown only this once (only a hash of it is kept).</p>
<p><label for="newkey">Key ${created.prefix}</label><input id="newkey" class="key" readonly value="${created.key}"></p>
<p>Use it as <code>Authorization: Bearer ${created.key}</code>, for example <code>curl -H "Authorization: Bearer ${created.key}" ${deps.publicUrl}/v1/elements/Fe/history</code>.</p></div>`
    : html``
}
<h2>API keys</h2>
${
  keys.length === 0
    ? html`<p>No keys yet.</p>`
    : html`<table class="data cards"><caption>Keys and calls in ${month}</caption><thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Calls this month</th><th scope="col">Status</th></tr></thead><tbody>
${keys.map(
  (k) =>
    html`<tr><td data-label="Name">${k.name ?? '—'}</td><td data-label="Key"><code>ri_${k.prefix}_…</code></td><td data-label="Created">${k.createdAt.slice(0, 10)}</td><td data-label="Last used">${k.lastUsedAt ? k.lastUsedAt.slice(0, 16).replace('T', ' ') : 'never'}</td><td data-label="Calls this month">${countText(usage.get(k.prefix) ?? 0)}</td><td data-label="Status">${
      k.revokedAt
        ? `revoked ${k.revokedAt.slice(0, 10)}`
        : html`<form method="post" action="/account/keys/${k.prefix}/revoke"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" aria-label="Revoke key ${k.name ?? k.prefix}">Revoke</button></form>`
    }</td></tr>`,
)}
</tbody></table>`
}
<form class="stack" method="post" action="/account/keys">
<label for="keyname">Name for a new key (optional)</label>
<input id="keyname" name="name" maxlength="${KEY_NAME_MAX}" placeholder="for example: laptop, CI">
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit">Create a key</button>
</form>
${feedTokenSection(deps, csrf, feedTokens, createdFeed)}
${webhookSection(session.plan, csrf, subscriptions, attempts, webhookNotice)}
<form method="post" action="/account/sign-out"><input type="hidden" name="csrf" value="${csrf}"><button type="submit">Sign out</button></form>`,
  );
}

/**
 * Feed tokens: what a feed reader puts in a feed's address (it sends no header), shown once when
 * made, listed by prefix and revocable, apart from the API keys they never stand for.
 */
function feedTokenSection(
  deps: AccountDeps,
  csrf: string,
  tokens: readonly FeedTokenInfo[],
  created?: { token: string; prefix: string },
) {
  const example = (token: string) =>
    `${deps.publicUrl}/v1/feeds/rising?${new URLSearchParams({ kind: 'topic', token })}`;
  return html`<h2 id="feeds">Feed tokens</h2>
<p>The feeds of topics and keywords take a feed token in their address, as feed readers send no key: add <code>token=&lt;FEED_TOKEN&gt;</code> to the feed's address (a subject's page links its feed). A feed token opens the feeds only, as your plan allows; never put an API key in an address. Elements' feeds need no token. More: <a href="/docs">API</a>.</p>
${
  created
    ? html`<div class="newkey" role="status"><h3>Your new feed token</h3><p>Copy it now: it is shown only this once (only a hash of it is kept).</p>
<p><label for="newfeedtoken">Feed token ${created.prefix}</label><input id="newfeedtoken" class="key" readonly value="${created.token}"></p>
<p>For example, the topics that rose most: <code>${example(created.token)}</code>.</p></div>`
    : html``
}
${
  tokens.length === 0
    ? html`<p>No feed tokens yet.</p>`
    : html`<table class="data cards"><caption>Feed tokens</caption><thead><tr><th scope="col">Token</th><th scope="col">Created</th><th scope="col">Status</th></tr></thead><tbody>
${tokens.map(
  (t) =>
    html`<tr><td data-label="Token"><code>rif_${t.prefix}_…</code></td><td data-label="Created">${t.createdAt.slice(0, 10)}</td><td data-label="Status">${
      t.revokedAt
        ? `revoked ${t.revokedAt.slice(0, 10)}`
        : html`<form method="post" action="/account/feed-tokens/${t.prefix}/revoke"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" aria-label="Revoke feed token ${t.prefix}">Revoke</button></form>`
    }</td></tr>`,
)}
</tbody></table>`
}
<form class="stack" method="post" action="/account/feed-tokens"><input type="hidden" name="csrf" value="${csrf}"><button type="submit">Create a feed token</button></form>`;
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_LIMITS } from '../../../src/web/account.js';
import { createMailer } from '../../../src/web/mailer.js';
import { riText } from '../../../src/web/numbers.js';
import { sampleApp } from '../../helpers/app.js';
import { Browser, hidden, linkIn, smtpSink } from '../../helpers/web.js';
import { servedSample } from '../../helpers/x402.js';

let sink: Awaited<ReturnType<typeof smtpSink>>;
let served: Awaited<ReturnType<typeof servedSample>>;
let base: string;

beforeAll(async () => {
  sink = await smtpSink();
  served = await servedSample({ SMTP_URL: sink.url });
  base = served.server.base;
}, 120_000);

afterAll(async () => {
  await served?.close();
  await sink?.close();
});

async function waitForMail(to: string, count = 1) {
  for (let i = 0; i < 400; i++) {
    const mine = sink.mails.filter((m) => m.to.includes(to));
    if (mine.length >= count) return mine[count - 1]!;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no mail to ${to}`);
}

/** Asks for a link, follows it and signs in: the browser then holds a session. */
async function signIn(browser: Browser, email: string, nth = 1) {
  const form = await (await browser.get('/account')).text();
  const asked = await browser.post('/account/sign-in', { email, csrf: hidden(form, 'csrf') });
  expect(asked.status).toBe(200);
  const link = linkIn(await waitForMail(email, nth));
  expect(link.startsWith(`${base}/account/verify?token=`)).toBe(true);
  const confirm = await browser.get(link);
  const page = await confirm.text();
  const done = await browser.post('/account/verify', {
    token: hidden(page, 'token'),
    csrf: hidden(page, 'csrf'),
  });
  return { link, confirmPage: page, done };
}

describe('accounts on the web: sign in by emailed link, keys, usage', () => {
  it('signs in by link (a new free account), creates a key shown once, counts its calls, revokes it', async () => {
    const browser = new Browser(base);
    const email = 'new.person@example.org';
    const { done } = await signIn(browser, email);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/account');
    const cookie = done.headers.getSetCookie().find((c) => c.startsWith('ri_session='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).not.toMatch(/Secure/i); // PUBLIC_URL is http here

    const account = await browser.get('/account');
    expect(account.headers.get('cache-control')).toBe('no-store');
    const accountHtml = await account.text();
    expect(accountHtml).toContain(`Signed in as <strong>${email}</strong>`);
    expect(accountHtml).toContain('Plan: <strong>free</strong>');
    expect(accountHtml).toContain('No keys yet.');

    const created = await browser.post('/account/keys', {
      name: 'laptop',
      csrf: hidden(accountHtml, 'csrf'),
    });
    expect(created.status).toBe(201);
    const createdHtml = await created.text();
    const key = /value="(ri_[a-z0-9]{8}_[A-Za-z0-9_-]{43})"/.exec(createdHtml)![1]!;
    const prefix = key.slice(3, 11);

    // The key works on the API (a free key opens yearly history), twice.
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`${base}/v1/elements/Fe/history`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(r.status).toBe(200);
    }
    const listed = await (await browser.get('/account')).text();
    expect(listed).not.toContain(key); // shown once only
    const row = new RegExp(
      `<tr><td data-label="Name">laptop</td><td data-label="Key"><code>ri_${prefix}_…</code></td><td[^>]*>[^<]+</td><td[^>]*>[^<]+</td><td[^>]*>(\\d+)</td>`,
    ).exec(listed);
    expect(row?.[1]).toBe('2');

    // The first press asks; nothing is revoked until the confirming form is sent.
    const asked = await browser.post(`/account/keys/${prefix}/revoke`, { csrf: hidden(listed, 'csrf') });
    expect(asked.status).toBe(200);
    const question = await asked.text();
    expect(question).toContain('<h1>Revoke key laptop?</h1>');
    expect(question).toContain('<input type="hidden" name="confirm" value="yes">');
    const still = await fetch(`${base}/v1/elements/Fe/history`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(still.status).toBe(200);
    const revoked = await browser.post(`/account/keys/${prefix}/revoke`, {
      csrf: hidden(listed, 'csrf'),
      confirm: 'yes',
    });
    expect(revoked.status).toBe(303);
    const after = await fetch(`${base}/v1/elements/Fe/history`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { code: string }).code).toBe('invalid_key');
    expect(await (await browser.get('/account')).text()).toMatch(/revoked \d{4}-\d{2}-\d{2}/);

    // Signing out ends the session everywhere: the old cookie no longer signs anyone in.
    const old = browser.cookies.get('ri_session')!;
    const out = await browser.post('/account/sign-out', { csrf: hidden(listed, 'csrf') });
    expect(out.status).toBe(303);
    const replay = await fetch(`${base}/account`, { headers: { cookie: `ri_session=${old}` } });
    expect(await replay.text()).toContain('Email me a sign-in link');
  });

  it('makes a feed token shown once, which opens feeds as the plan allows, and revokes it', async () => {
    const browser = new Browser(base);
    await signIn(browser, 'feeds.reader@example.org');
    const page = await (await browser.get('/account')).text();
    expect(page).toContain('No feed tokens yet.');
    const created = await browser.post('/account/feed-tokens', { csrf: hidden(page, 'csrf') });
    expect(created.status).toBe(201);
    const token = /value="(rif_[a-z0-9]{8}_[A-Za-z0-9_-]{43})"/.exec(await created.text())![1]!;
    const prefix = token.slice(4, 12);
    const feed = (path: string) => fetch(`${base}${path}${path.includes('?') ? '&' : '?'}token=${token}`);
    // Authenticated as the free account: an element's feed, but not a topic's (Personal).
    expect((await feed('/v1/feeds/rising?kind=element')).status).toBe(200);
    const topic = await feed('/v1/feeds/subjects/topic/T10030');
    expect([topic.status, ((await topic.json()) as { code: string }).code]).toEqual([403, 'plan_required']);
    // It is no API key.
    const asKey = await fetch(`${base}/v1/elements/Fe/history`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(asKey.status).toBe(401);

    const listed = await (await browser.get('/account')).text();
    expect(listed).not.toContain(token);
    expect(listed).toContain(`<code>rif_${prefix}_…</code>`);
    const asked = await browser.post(`/account/feed-tokens/${prefix}/revoke`, {
      csrf: hidden(listed, 'csrf'),
    });
    expect(await asked.text()).toContain(`<h1>Revoke feed token rif_${prefix}_…?</h1>`);
    expect((await feed('/v1/feeds/rising?kind=element')).status).toBe(200);
    const revoked = await browser.post(`/account/feed-tokens/${prefix}/revoke`, {
      csrf: hidden(listed, 'csrf'),
      confirm: 'yes',
    });
    expect(revoked.status).toBe(303);
    const refused = await feed('/v1/feeds/rising?kind=element');
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([
      401,
      'invalid_feed_token',
    ]);
    expect(await (await browser.get('/account')).text()).toMatch(
      /<code>rif_[a-z0-9]{8}_…<\/code><\/td><td[^>]*>[^<]+<\/td><td data-label="Status">revoked \d{4}-/,
    );
    // Another account cannot revoke it: the form names only its own tokens.
    const other = new Browser(base);
    await signIn(other, 'someone.else@example.org');
    const mine = await (await other.get('/account')).text();
    const made = await other.post('/account/feed-tokens', { csrf: hidden(mine, 'csrf') });
    const theirs = /value="(rif_[a-z0-9]{8}_[A-Za-z0-9_-]{43})"/.exec(await made.text())![1]!;
    await browser.post(`/account/feed-tokens/${theirs.slice(4, 12)}/revoke`, {
      csrf: hidden(listed, 'csrf'),
      confirm: 'yes',
    });
    expect((await fetch(`${base}/v1/feeds/rising?kind=element&token=${theirs}`)).status).toBe(200);
  });

  it('a sign-in link works once; a second sign-in finds the same account', async () => {
    const email = 'twice@example.org';
    const first = new Browser(base);
    const { link, done } = await signIn(first, email);
    expect(done.status).toBe(303);
    // The same link again, in another browser: refused.
    const other = new Browser(base);
    const page = await (await other.get(link)).text();
    const again = await other.post('/account/verify', {
      token: hidden(page, 'token'),
      csrf: hidden(page, 'csrf'),
    });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('expired or was used already');
    expect(other.cookies.has('ri_session')).toBe(false);
    // Opening the link (GET) does not use it up: mail scanners fetch links.
    const second = await signIn(other, email, 2);
    expect(second.done.status).toBe(303);
    const accounts = await served.ctx.state.findAccountByEmail(email);
    expect(accounts?.plan).toBe('free');
  });

  it('refuses forms without the right CSRF token or from another origin', async () => {
    const browser = new Browser(base);
    await signIn(browser, 'csrf@example.org');
    const html = await (await browser.get('/account')).text();
    const csrf = hidden(html, 'csrf');
    expect((await browser.post('/account/keys', { name: 'x' })).status).toBe(403);
    expect((await browser.post('/account/keys', { name: 'x', csrf: 'wrong' })).status).toBe(403);
    expect(
      (await browser.post('/account/keys', { name: 'x', csrf }, { origin: 'https://evil.example' })).status,
    ).toBe(403);
    expect(
      (await browser.post('/account/keys', { name: 'x', csrf }, { 'sec-fetch-site': 'cross-site' })).status,
    ).toBe(403);
    // A visitor without the form cookie cannot ask for sign-in mail with a made-up token.
    const stranger = new Browser(base);
    expect(
      (await stranger.post('/account/sign-in', { email: 'a@example.org', csrf: 'made-up' })).status,
    ).toBe(403);
    expect((await browser.post('/account/keys', { name: 'ok', csrf })).status).toBe(201);
  });

  it('tells no one whether an account exists, and limits sign-in mail per address', async () => {
    const known = 'free@example.org'; // made by the sample app
    const answer = async (email: string) => {
      const b = new Browser(base);
      const form = await (await b.get('/account')).text();
      const r = await b.post('/account/sign-in', { email, csrf: hidden(form, 'csrf') });
      return { status: r.status, body: (await r.text()).replace(email, 'EMAIL') };
    };
    const a = await answer(known);
    const b = await answer('nobody.yet@example.org');
    expect(a).toEqual(b);
    const limited = 'limited@example.org';
    const statuses: number[] = [];
    for (let i = 0; i < SIGN_IN_LIMITS.perEmail + 1; i++) statuses.push((await answer(limited)).status);
    expect(statuses.slice(0, SIGN_IN_LIMITS.perEmail).every((s) => s === 200)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    expect((await answer('not an email')).status).toBe(400);
  });

  it('shows a signed-in account the data its plan opens: HRI and subject data from Personal', async () => {
    const browser = new Browser(base);
    const email = 'upgraded@example.org';
    await signIn(browser, email);
    const topic = '/subjects/topic/';
    const search = (await (
      await fetch(`${base}/v1/subjects/search?q=oxygen%20evolution`, {
        headers: { authorization: `Bearer ${served.ctx.keys.free}` },
      })
    ).json()) as { results: { subject_type: string; subject_id: string }[] };
    const id = search.results.find((r) => r.subject_type === 'topic')!.subject_id;

    const freeFe = await (await browser.get('/elements/Fe')).text();
    expect(freeFe).toContain('Shown with the Personal plan');
    const freeTopic = await browser.get(`${topic}${id}`);
    expect(await freeTopic.text()).toContain('Your plan is free');
    // A free key opens subject search: the page asks, then shows the results.
    expect(await (await browser.get('/subjects/search')).text()).toContain('<input id="q" name="q"');
    expect(await (await browser.get('/subjects/search?q=oxygen%20evolution')).text()).toContain(
      `href="${topic}${id}"`,
    );

    await served.ctx.state.setPlan(email, 'personal');
    const fe = await browser.get('/elements/Fe');
    expect(fe.headers.get('cache-control')).toBe('private, no-store');
    const api = (await (
      await fetch(`${base}/v1/elements/Fe`, {
        headers: { authorization: `Bearer ${served.ctx.keys.personal}` },
      })
    ).json()) as { hri: number };
    // HRI as the pages write it; a 0 with why (none of the window's high-impact papers names it).
    expect(await fe.text()).toContain(
      api.hri === 0 ? '<td>0 <span class="muted">(none of the' : `<td>${riText(api.hri)}</td>`,
    );
    const topicPage = await (await browser.get(`${topic}${id}`)).text();
    expect(topicPage).toMatch(/<th scope="row">HRI<\/th><td>\d/);
    expect(topicPage).toContain('<svg class="chart"');
    const research = await (await browser.get('/research?q=oxygen%20evolution%20nickel')).text();
    expect(research).toMatch(/matching papers/);
    // The lab needs Professional.
    expect(await (await browser.get('/lab?q=Ni%20Fe')).text()).toContain('Your plan is personal');
    await served.ctx.state.setPlan(email, 'professional');
    expect(await (await browser.get('/lab?q=Ni%20Fe')).text()).toMatch(/\d+ matching papers/);
    // A visitor never sees it: public pages stay public and cacheable.
    const visitor = await fetch(`${base}/elements/Fe`);
    expect(visitor.headers.get('cache-control')).toBe('public, max-age=300');
    expect(visitor.headers.get('vary')).toMatch(/Cookie/);
    expect(await visitor.text()).toContain('Shown with the Personal plan');
  });

  it('pages carry security headers, no inline script and no inline style', async () => {
    for (const path of [
      '/',
      '/elements/Fe',
      '/pricing',
      '/account',
      '/docs',
      '/docs/errors',
      '/research?q=x',
    ]) {
      const r = await fetch(`${base}${path}`);
      const csp = r.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).toContain("script-src 'self'");
      expect(csp, path).not.toContain('unsafe-inline');
      expect(r.headers.get('referrer-policy'), path).toBe('same-origin');
      expect(r.headers.get('x-content-type-options'), path).toBe('nosniff');
      const html = await r.text();
      expect(html, path).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html, path).not.toMatch(/\sstyle="/);
    }
  });
});

describe('sign-in mail and cookies without a test server', () => {
  it('prints the message when no SMTP_URL is set', async () => {
    const printed: string[] = [];
    const mailer = createMailer({
      smtpUrl: undefined,
      from: 'x <x@localhost>',
      print: (t) => printed.push(t),
    });
    await mailer.send({ to: 'a@example.org', subject: 'S', text: 'link: http://x/account/verify?token=abc' });
    expect(printed.join('')).toContain('http://x/account/verify?token=abc');
  });

  it('marks the session cookie Secure when PUBLIC_URL is https', async () => {
    const ctx = await sampleApp(); // PUBLIC_URL https://ri.example
    try {
      const form = await ctx.app.request('https://ri.example/account');
      const formCookie = form.headers.getSetCookie()[0]!;
      expect(formCookie).toMatch(/Secure/);
      expect(formCookie).toMatch(/HttpOnly/);
      expect(form.headers.get('strict-transport-security')).toMatch(/max-age=\d+/);
    } finally {
      await ctx.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { PLAN_REQUEST_LIMITS } from '../../../src/web/pricing.js';
import { bearer } from '../../helpers/app.js';
import { Browser, hidden, smtpSink } from '../../helpers/web.js';
import { servedSample } from '../../helpers/x402.js';

/**
 * /pricing over real HTTP: each plan's price from configuration and how to get it; the request
 * form mails the operator through the same mailer as sign-in (a real SMTP sink here); every
 * upgrade_url the API prints lands on it.
 */
let sink: Awaited<ReturnType<typeof smtpSink>>;
let served: Awaited<ReturnType<typeof servedSample>>;
let plain: Awaited<ReturnType<typeof servedSample>>;
const OPERATOR = 'operator@ri.example';

beforeAll(async () => {
  sink = await smtpSink();
  served = await servedSample({
    SMTP_URL: sink.url,
    OPERATOR_EMAIL: OPERATOR,
    PLAN_PRICE_PERSONAL_USD: 19,
    PLAN_PRICE_PROFESSIONAL_USD: 99.5,
  });
  // Mail configured, no operator address and no prices: nothing to ask on the web.
  plain = await servedSample({ SMTP_URL: sink.url });
}, 120_000);

afterAll(async () => {
  await served?.close();
  await plain?.close();
  await sink?.close();
});

const section = (page: string, plan: string) => page.split(`id="plan-${plan}"`)[1]!.split('</section>')[0]!;

describe('/pricing', () => {
  it('gives each plan its configured price and the way to get it', async () => {
    const r = await fetch(`${served.server.base}/pricing`);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('public, max-age=300');
    const page = await r.text();
    expect(section(page, 'free')).toContain('<p class="price">free</p>');
    expect(section(page, 'free')).toContain('<a href="/account">Sign in</a>');
    expect(section(page, 'personal')).toContain('<p class="price">19.00 USD a month</p>');
    expect(section(page, 'professional')).toContain('<p class="price">99.50 USD a month</p>');
    for (const plan of ['personal', 'professional'])
      expect(section(page, plan)).toContain(`<a class="ask" href="/pricing/request?plan=${plan}">`);
    expect(page).toContain(`<a href="mailto:${OPERATOR}">`);
    expect(page).not.toContain('on request');
    // A button is not a word of a sentence: nothing stray after it.
    expect(page).not.toMatch(/class="ask"[^>]*>[^<]*<\/a>\s*[.,;]/);
  });

  it('by default (no prices, no mail server): how to ask, in one sentence, beside the button', async () => {
    const bare = await servedSample();
    try {
      const page = await (await fetch(`${bare.server.base}/pricing`)).text();
      for (const plan of ['personal', 'professional']) {
        const part = section(page, plan);
        expect(part).not.toContain('class="price"');
        expect(part).toContain(
          '<p class="price-ask">Priced on request: ask the operator of this server with the button below.</p>',
        );
        expect(part).toContain(`<a class="ask" href="/pricing/request?plan=${plan}">`);
      }
      expect(page).not.toMatch(/class="ask"[^>]*>[^<]*<\/a>\s*[.,;]/);
      expect(page).not.toMatch(/<p class="price">on request<\/p>/);
    } finally {
      await bare.close();
    }
  });

  it('without prices or an operator address: one sentence on how a plan is had, no request form', async () => {
    const page = await (await fetch(`${plain.server.base}/pricing`)).text();
    for (const plan of ['personal', 'professional']) {
      expect(section(page, plan)).not.toContain('class="price"');
      expect(section(page, plan)).toContain(
        '<p>Priced and given by the operator of this server, who takes no requests on this site.</p>',
      );
    }
    expect(page).not.toContain('/pricing/request?plan=');
    const form = await (await fetch(`${plain.server.base}/pricing/request`)).text();
    expect(form).not.toContain('<form class="stack"');
  });

  it('every upgrade_url the API prints answers 200 with a way to ask for the plan it names', async () => {
    const base = served.server.base;
    const refusals = [
      await fetch(`${base}/v1/elements/Fe/papers`, bearer(served.ctx.keys.free)),
      await fetch(`${base}/v1/lab/quote?q=Ni%20Fe`, bearer(served.ctx.keys.personal)),
      await fetch(`${base}/v1/elements/Fe/history`),
    ];
    for (const refusal of refusals) {
      const body = (await refusal.json()) as { upgrade_url: string; required_plan: string };
      expect(body.upgrade_url.startsWith(base)).toBe(true);
      const landing = await fetch(body.upgrade_url);
      expect(landing.status).toBe(200);
      const page = await landing.text();
      expect(page).toContain(
        body.required_plan === 'free'
          ? '<a href="/account">Sign in</a>'
          : `/pricing/request?plan=${body.required_plan}`,
      );
    }
  });

  it('a plan request mails the operator, Reply-To the reader, with the command that gives the plan', async () => {
    const browser = new Browser(served.server.base);
    const form = await browser.get('/pricing/request?plan=professional');
    expect(form.headers.get('cache-control')).toBe('no-store');
    const formHtml = await form.text();
    expect(formHtml).toContain(
      '<option value="professional" selected>Professional (99.50 USD a month)</option>',
    );
    const email = 'reader.asks@example.org';
    const sent = await browser.post('/pricing/request', {
      plan: 'professional',
      email,
      message: 'For our lab group.',
      csrf: hidden(formHtml, 'csrf'),
    });
    expect(sent.status).toBe(200);
    expect(await sent.text()).toContain('Request sent');
    let mail: (typeof sink.mails)[number] | undefined;
    for (let i = 0; i < 200 && !mail; i++) {
      mail = sink.mails.find((m) => m.to.includes(OPERATOR) && m.raw.includes(email));
      if (!mail) await new Promise((r) => setTimeout(r, 50));
    }
    expect(mail).toBeDefined();
    expect(mail!.raw).toMatch(new RegExp(`^Reply-To: ${email}`, 'mi'));
    expect(mail!.raw).toMatch(/^Subject: Plan request: professional for reader\.asks@example\.org/m);
    expect(mail!.raw).toContain('For our lab group.');
    expect(mail!.raw).toContain(`ri plans set ${email} professional`);
  });

  it('refuses a request without its form token, a bad address or plan, and past the hourly limit', async () => {
    const browser = new Browser(served.server.base);
    const formHtml = await (await browser.get('/pricing/request')).text();
    const csrf = hidden(formHtml, 'csrf');
    expect(
      (await browser.post('/pricing/request', { plan: 'personal', email: 'a@example.org' })).status,
    ).toBe(403);
    expect((await browser.post('/pricing/request', { plan: 'personal', email: 'nope', csrf })).status).toBe(
      400,
    );
    expect(
      (await browser.post('/pricing/request', { plan: 'free', email: 'a@example.org', csrf })).status,
    ).toBe(400);
    const statuses: number[] = [];
    for (let i = 0; i <= PLAN_REQUEST_LIMITS.perEmail; i++)
      statuses.push(
        (await browser.post('/pricing/request', { plan: 'personal', email: 'often@example.org', csrf }))
          .status,
      );
    expect(statuses.slice(0, -1).every((s) => s === 200)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe('the older edition (EDITION=enterprise)', () => {
  it('offers Free and Enterprise, at the configured price, and the pages name Enterprise as the plan needed', async () => {
    const older = await servedSample({
      EDITION: 'enterprise',
      PLAN_PRICE_ENTERPRISE_USD: 500,
      OPERATOR_EMAIL: OPERATOR,
    });
    try {
      const pricing = await (await fetch(`${older.server.base}/pricing`)).text();
      expect(section(pricing, 'enterprise')).toContain('<p class="price">500.00 USD a month</p>');
      expect(pricing).not.toContain('id="plan-personal"');
      const fe = await (await fetch(`${older.server.base}/elements/Fe`)).text();
      expect(fe).toContain('Shown with the Enterprise plan');
      // No page names a plan this edition does not have (the calls' descriptions included).
      for (const path of ['/pricing', '/account', '/elements/Fe', '/', '/pricing/request']) {
        const page = await (await fetch(`${older.server.base}${path}`)).text();
        expect([path, page.match(/\b(?:Personal|Professional)\b[^<]*/g)]).toEqual([path, null]);
      }
    } finally {
      await older.close();
    }
  });
});

describe('the pricing configuration', () => {
  it('reads plan prices as numbers and checks the operator address', () => {
    const config = loadConfig({ PLAN_PRICE_PERSONAL_USD: '19.5', OPERATOR_EMAIL: 'ops@example.org' });
    expect(config.PLAN_PRICE_PERSONAL_USD).toBe(19.5);
    expect(config.PLAN_PRICE_PROFESSIONAL_USD).toBeUndefined();
    expect(config.OPERATOR_EMAIL).toBe('ops@example.org');
    expect(() => loadConfig({ OPERATOR_EMAIL: 'not an address' })).toThrow(ConfigError);
    expect(() => loadConfig({ PLAN_PRICE_PERSONAL_USD: '-1' })).toThrow(ConfigError);
  });
});

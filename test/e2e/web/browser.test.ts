import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser as HttpBrowser, linkIn, signInByMail, smtpSink } from '../../helpers/web.js';
import { servedSample } from '../../helpers/x402.js';

/**
 * The pages in a real browser: Debian's chromium driven by playwright-core. `.ci/run` installs
 * chromium and sets REQUIRE_BROWSER=1, so there a missing browser fails; elsewhere it skips loudly.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAVE_BROWSER = existsSync(CHROMIUM);
if (!HAVE_BROWSER && process.env.REQUIRE_BROWSER !== '1')
  console.warn(`browser tests skipped: no chromium at ${CHROMIUM} (apt-get install chromium)`);

const ARTIFACTS = join(process.cwd(), 'test-artifacts');
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** The viewports every page kind is checked at: a laptop and a phone. */
const VIEWPORTS = [
  { width: 1366, height: 900 },
  { width: 390, height: 844 },
] as const;

let browser: Browser;
let served: Awaited<ReturnType<typeof servedSample>>;
let sink: Awaited<ReturnType<typeof smtpSink>>;
let base: string;

beforeAll(async () => {
  if (!HAVE_BROWSER && process.env.REQUIRE_BROWSER !== '1') return;
  mkdirSync(join(ARTIFACTS, 'screenshots'), { recursive: true });
  sink = await smtpSink();
  served = await servedSample({ SMTP_URL: sink.url });
  base = served.server.base;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
  await sink?.close();
});

/** axe-core's serious and critical violations on the page (evaluated over CDP, so the CSP stays on). */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const result = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * Targets smaller than 24 x 24 CSS px (WCAG 2.5.8): links, buttons and form fields, except a link
 * inside a line of text (the criterion's inline exception) and what is not shown.
 */
async function smallTargets(page: Page): Promise<string[]> {
  return (await page.evaluate(`(() => {
    const out = [];
    for (const el of document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      const style = getComputedStyle(el);
      if (style.visibility === 'hidden' || el.closest('.sr')) continue;
      const inline = style.display === 'inline' && el.parentElement && getComputedStyle(el.parentElement).display !== 'flex' &&
        (el.parentElement.textContent || '').trim().length > (el.textContent || '').trim().length;
      if (inline) continue;
      if (r.width < 24 || r.height < 24)
        out.push(el.tagName.toLowerCase() + ' "' + (el.textContent || el.getAttribute('name') || '').trim().slice(0, 30) + '" ' + Math.round(r.width) + 'x' + Math.round(r.height));
    }
    return out;
  })()`)) as string[];
}

/**
 * Words broken inside (one word over two lines) in the elements `selector` finds: each word of
 * their text (split at spaces, hyphens and slashes, where a line may break) must sit on one line.
 */
async function brokenWords(page: Page, selector: string): Promise<string[]> {
  return (await page.evaluate(`((sel) => {
    const out = [];
    for (const el of document.querySelectorAll(sel)) {
      const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        for (const m of n.textContent.matchAll(/[^\\s\\-\\u2010-\\u2015/]+/g)) {
          const r = document.createRange();
          r.setStart(n, m.index);
          r.setEnd(n, m.index + m[0].length);
          const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
          if (lines.size > 1) out.push(m[0]);
        }
      }
    }
    return out;
  })(${JSON.stringify(selector)})`)) as string[];
}

async function newPage(
  width: number,
  height = 900,
  cookies: { name: string; value: string }[] = [],
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height } });
  if (cookies.length > 0) await context.addCookies(cookies.map((c) => ({ ...c, url: base })));
  const page = await context.newPage();
  page.on('pageerror', (e) => {
    throw e;
  });
  return page;
}

/**
 * The page's first-contentful-paint time. The entry is reported after the frame is presented, which
 * on a loaded machine can come after the load event `goto` waits for (CI once read null right
 * after it), so wait for it with a buffered observer, up to 15 s.
 */
function firstContentfulPaint(page: Page): Promise<number | null> {
  return page.evaluate(`new Promise((resolve) => {
    const take = (entries) => {
      const e = entries.find((x) => x.name === 'first-contentful-paint');
      if (e) resolve(e.startTime);
    };
    take(performance.getEntriesByType('paint'));
    new PerformanceObserver((list) => take(list.getEntries())).observe({ type: 'paint', buffered: true });
    setTimeout(() => resolve(null), 15000);
  })`) as Promise<number | null>;
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(ARTIFACTS, 'screenshots', `${name}.png`), fullPage: true });

describe.skipIf(!HAVE_BROWSER && process.env.REQUIRE_BROWSER !== '1')('the pages in a real browser', () => {
  it('the periodic table: 118 cells, scores on keyboard focus, the year stepped, Fe and its chart', async () => {
    const page = await newPage(1366);
    const blocked: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });
    await page.goto(`${base}/`);
    expect(await page.locator('.ptable a').count()).toBe(118);
    const fcp = await firstContentfulPaint(page);
    expect(fcp).not.toBeNull();
    writeFileSync(join(ARTIFACTS, 'first-contentful-paint.json'), JSON.stringify({ '/': fcp }, null, 2));

    // Keyboard: Tab reaches the table, and a focused cell shows its RIS, RI and papers.
    let inTable = false;
    for (let i = 0; i < 40 && !inTable; i++) {
      await page.keyboard.press('Tab');
      inTable = (await page.evaluate("document.activeElement?.closest('.ptable') !== null")) as boolean;
    }
    expect(inTable).toBe(true);
    const tip = (await page.evaluate(
      "getComputedStyle(document.activeElement, '::after').content",
    )) as string;
    expect(tip).toMatch(/RIS \d+\.\d, RI [\d,]+(\.\d+)?, [\d,]+ papers?/);

    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'home-1366');

    // Step through the years: choose one, then the previous-year link.
    const years = await page
      .locator('#year option[value]:not([value=""])')
      .evaluateAll((o) => o.map((x) => (x as unknown as { value: string }).value));
    const year = years[years.length - 1]!;
    await page.selectOption('#year', year);
    await page.click('form.year button[type=submit]');
    await expect.poll(() => page.textContent('h1')).toContain(year);
    await page.click('a[rel=prev]');
    await expect.poll(() => page.textContent('h1')).toContain(years[years.length - 2]!);

    await page.click('.ptable a[href="/elements/Fe"]');
    await page.waitForURL(`${base}/elements/Fe`);
    expect(await page.textContent('h1')).toBe('Iron (Fe)');
    expect(await page.locator('svg.chart').count()).toBe(2);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'element-Fe-1366');
    expect(blocked).toEqual([]);
  });

  it('every page kind at 1366 and 390 px, as a visitor and signed in: no sideways scroll, targets >= 24 px, axe', async () => {
    // A Professional reader, signed in by the emailed link; the browser gets its session cookie.
    const reader = new HttpBrowser(base);
    const email = 'browser.professional@example.org';
    await signInByMail(reader, sink.mails, email);
    await served.ctx.state.setPlan(email, 'professional');
    // A key, so the account page shows its table of keys (with the Revoke buttons).
    const account = await (await reader.get('/account')).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(account)![1]!;
    expect((await reader.post('/account/keys', { name: 'phone', csrf })).status).toBe(201);
    const session = [{ name: 'ri_session', value: reader.cookies.get('ri_session')! }];
    const search = (await (
      await fetch(`${base}/v1/subjects/search?q=oxygen%20evolution`, {
        headers: { authorization: `Bearer ${served.ctx.keys.free}` },
      })
    ).json()) as { results: { subject_type: string; subject_id: string }[] };
    const topic = search.results.find((r) => r.subject_type === 'topic')!.subject_id;
    const kinds = [
      ['/', 'home'],
      ['/elements/Fe', 'element-Fe'],
      [`/subjects/topic/${topic}`, 'topic'],
      ['/subjects/search?q=oxygen%20evolution', 'search'],
      ['/subjects/search?q=iron', 'search-iron'],
      ['/subjects/search?q=steelmaking%20processes', 'search-steelmaking'],
      ['/research?q=oxygen%20evolution%20nickel', 'research'],
      ['/lab?q=Ni%20Fe', 'lab'],
      ['/lab?q=iron%20AND%20cobalt', 'lab-error'],
      ['/pricing', 'pricing'],
      ['/pricing/request?plan=personal', 'plan-request'],
      ['/account', 'account'],
      ['/docs/errors', 'errors'],
    ] as const;
    const failures: string[] = [];
    for (const { width, height } of VIEWPORTS)
      for (const [who, cookies] of [
        ['visitor', []],
        ['professional', session],
      ] as const) {
        const page = await newPage(width, height, [...cookies]);
        for (const [path, name] of kinds) {
          await page.goto(`${base}${path}`);
          const where = `${path} at ${width}px as ${who}`;
          const overflow = (await page.evaluate(
            'document.documentElement.scrollWidth - document.documentElement.clientWidth',
          )) as number;
          if (overflow > 0) failures.push(`${where}: ${overflow}px sideways scroll`);
          for (const small of await smallTargets(page)) failures.push(`${where}: ${small}`);
          // The header's links and search results: no word broken inside, on a phone too.
          for (const word of await brokenWords(page, 'header.site nav a, table.results td, ul.found li'))
            failures.push(`${where}: "${word}" broken over two lines`);
          // Research and the lab are in every header, for every reader.
          expect(await page.locator('header.site nav a[href="/research"]').count(), where).toBe(1);
          expect(await page.locator('header.site nav a[href="/lab"]').count(), where).toBe(1);
          for (const v of await axeViolations(page)) failures.push(`${where}: ${v}`);
          if (width === 390 || path === '/pricing') await shot(page, `${name}-${who}-${width}`);
        }
        await page.context().close();
      }
    expect(failures).toEqual([]);
  }, 360_000);

  it('the periodic table on a phone says that it scrolls, and scrolls; on a laptop it fits', async () => {
    const phone = await newPage(390, 844);
    await phone.goto(`${base}/`);
    const wrap = phone.locator('.ptable-wrap');
    const [scrollWidth, clientWidth] = (await wrap.evaluate((w) => [w.scrollWidth, w.clientWidth])) as [
      number,
      number,
    ];
    expect(scrollWidth).toBeGreaterThan(clientWidth);
    expect(await phone.locator('.scroll-cue').isVisible()).toBe(true);
    expect(await phone.locator('.scroll-cue').textContent()).toMatch(/scroll it sideways/);
    // The right edge fades while there is more to the right, and not once scrolled to the end.
    const fade = () =>
      phone.evaluate(
        "getComputedStyle(document.querySelector('.ptable-wrap')).getPropertyValue('--fade')",
      ) as Promise<string>;
    expect(await fade()).toBe('40px');
    await wrap.evaluate((w) => {
      w.scrollLeft = w.scrollWidth;
    });
    await expect.poll(fade).toBe('0px');
    await shot(phone, 'home-scrolled-390');
    await phone.context().close();
    const laptop = await newPage(1366);
    await laptop.goto(`${base}/`);
    expect(await laptop.locator('.scroll-cue').isVisible()).toBe(false);
    expect(
      await laptop.locator('.ptable-wrap').evaluate((w) => w.scrollWidth - w.clientWidth),
    ).toBeLessThanOrEqual(0);
    await laptop.context().close();
  });

  it('an unusable lab query: its fix is one click from the marked error', async () => {
    const reader = new HttpBrowser(base);
    const email = 'browser.lab@example.org';
    await signInByMail(reader, sink.mails, email);
    await served.ctx.state.setPlan(email, 'professional');
    const page = await newPage(390, 844, [{ name: 'ri_session', value: reader.cookies.get('ri_session')! }]);
    await page.goto(`${base}/lab`);
    await page.fill('#q', 'iron AND cobalt');
    await page.click('main button[type=submit]');
    await expect.poll(() => page.textContent('mark')).toBe('AND');
    expect(await page.inputValue('#q')).toBe('iron AND cobalt');
    expect(await axeViolations(page)).toEqual([]);
    await page.click('a.fix');
    await expect.poll(() => page.inputValue('#q')).toBe('iron cobalt');
    expect(await page.textContent('main')).toMatch(/[\d,]+ matching papers?\./);
    await page.context().close();
  });

  it('a list link that wraps has its number by its first line, at 390 and 1366 px', async () => {
    const reader = new HttpBrowser(base);
    const email = 'browser.lists@example.org';
    await signInByMail(reader, sink.mails, email);
    await served.ctx.state.setPlan(email, 'personal');
    const session = [{ name: 'ri_session', value: reader.cookies.get('ri_session')! }];
    // The list marker sits on the li's first line box: a zero-width probe put before the link
    // lands on that line, which must be the link's first (its top), not its last.
    const markers = `[...document.querySelectorAll('main li')]
      .filter((li) => li.firstChild && li.firstChild === li.firstElementChild && li.firstChild.tagName === 'A')
      .map((li) => {
        const a = li.firstElementChild;
        const box = a.getBoundingClientRect();
        const probe = document.createElement('span');
        probe.textContent = '\\u200b';
        li.insertBefore(probe, a);
        const line = probe.getBoundingClientRect().top;
        probe.remove();
        const lineHeight = parseFloat(getComputedStyle(a).lineHeight);
        return { link: a.textContent.slice(0, 40), wraps: box.height > 1.5 * lineHeight, below: Math.round(line - box.top) };
      })
      .filter((x) => x.wraps)`;
    const failures: string[] = [];
    let wrapped = 0;
    for (const { width, height } of VIEWPORTS) {
      const page = await newPage(width, height, session);
      for (const path of ['/elements/Fe', '/research?q=oxygen%20evolution%20nickel']) {
        await page.goto(`${base}${path}`);
        const links = (await page.evaluate(markers)) as { link: string; below: number }[];
        wrapped += links.length;
        for (const l of links)
          if (Math.abs(l.below) > 4)
            failures.push(`${path} at ${width}px: "${l.link}" numbered ${l.below}px below its top`);
      }
      await page.context().close();
    }
    expect(wrapped).toBeGreaterThan(0);
    expect(failures).toEqual([]);
  });

  it('an account through the emailed link: create a key, call the API with it, revoke it, refused', async () => {
    const page = await newPage(1366);
    const email = 'browser.user@example.org';
    await page.goto(`${base}/account`);
    await page.fill('#email', email);
    await page.click('main button[type=submit]');
    await expect.poll(() => page.textContent('h1')).toBe('Check your mail');
    let mail: (typeof sink.mails)[number] | undefined;
    await expect.poll(() => (mail = sink.mails.find((m) => m.to.includes(email)))).toBeDefined();
    await page.goto(linkIn(mail!));
    await page.click('main button[type=submit]');
    await page.waitForURL(`${base}/account`);
    expect(await page.textContent('main')).toContain(`Signed in as ${email}`);

    await page.fill('#keyname', 'from the browser');
    await page.click('text=Create a key');
    const key = await page.inputValue('#newkey');
    expect(key).toMatch(/^ri_[a-z0-9]{8}_/);
    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'account-new-key-1366');

    const call = () =>
      fetch(`${base}/v1/elements/Fe/history`, { headers: { authorization: `Bearer ${key}` } });
    expect((await call()).status).toBe(200);
    await page.goto(`${base}/account`);
    await page.click(`button[aria-label="Revoke key from the browser"]`);
    await expect.poll(() => page.textContent('h1')).toBe('Revoke key from the browser?');
    expect(await axeViolations(page)).toEqual([]);
    await page.click('text=Yes, revoke it');
    await page.waitForURL(`${base}/account`);
    expect(await page.textContent('main')).toMatch(/revoked \d{4}-/);
    const refused = await call();
    expect(refused.status).toBe(401);
  });
});

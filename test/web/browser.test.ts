import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkIn, smtpSink } from '../helpers/web.js';
import { servedSample } from '../helpers/x402.js';

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
const WIDTHS = [1440, 375] as const;

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

async function newPage(width: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
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
    const page = await newPage(1440);
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
    expect(tip).toMatch(/RIS \d+\.\d, RI \d+(\.\d+)?, [\d,]+ papers/);

    expect(await axeViolations(page)).toEqual([]);
    await shot(page, 'home-1440');

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
    await shot(page, 'element-Fe-1440');
    expect(blocked).toEqual([]);
  });

  it('renders at 375 px without sideways scrolling; pricing, errors and account pass axe', async () => {
    for (const width of WIDTHS) {
      const page = await newPage(width);
      for (const [path, name] of [
        ['/', 'home'],
        ['/elements/Fe', 'element-Fe'],
        ['/pricing', 'pricing'],
        ['/account', 'account'],
        ['/docs/errors', 'errors'],
      ] as const) {
        await page.goto(`${base}${path}`);
        const overflow = await page.evaluate(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
        expect(overflow, `${path} at ${width}px`).toBeLessThanOrEqual(0);
        expect(await axeViolations(page), `${path} at ${width}px`).toEqual([]);
        if (width === 375 || path !== '/') await shot(page, `${name}-${width}`);
      }
    }
  });

  it('an account through the emailed link: create a key, call the API with it, revoke it, refused', async () => {
    const page = await newPage(1440);
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
    await shot(page, 'account-new-key-1440');

    const call = () =>
      fetch(`${base}/v1/elements/Fe/history`, { headers: { authorization: `Bearer ${key}` } });
    expect((await call()).status).toBe(200);
    await page.goto(`${base}/account`);
    await page.click(`button[aria-label="Revoke key from the browser"]`);
    await page.waitForURL(`${base}/account`);
    expect(await page.textContent('main')).toMatch(/revoked \d{4}-/);
    const refused = await call();
    expect(refused.status).toBe(401);
  });
});

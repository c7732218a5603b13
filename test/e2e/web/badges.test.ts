import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { emptyState } from '../../helpers/app.js';
import { firstPublication, ingestAndBuild, many } from '../../helpers/changes-corpus.js';
import { tempDir, topic } from '../../helpers/works.js';
import { freePort } from '../../helpers/x402.js';

/**
 * The badges in a real browser (Debian's chromium through playwright-core, as browser.test.ts):
 * each kind parsed by the browser's XML parser, a topic named with <, & and quotes among them, and
 * the element and subject pages' snippet to copy, at a phone's width and a laptop's, the
 * snippet's <img> loading from the address it prints.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const RUN = existsSync(CHROMIUM) || process.env.REQUIRE_BROWSER === '1';
if (!RUN) console.warn(`badge browser tests skipped: no chromium at ${CHROMIUM}`);

const ODD_NAME = 'Alloys <Ni & "Co"> \'oxide\' layers';
const ODD = topic(500, ODD_NAME, 0.99);
const VIEWPORTS = [
  { width: 390, height: 844 },
  { width: 1280, height: 900 },
] as const;

let browser: Browser;
let server: RunningServer;
let manager: SnapshotManager;
let state: StateStore;
let base: string;
let token: string;
let version: string;

beforeAll(async () => {
  if (!RUN) return;
  const dataDir = tempDir('ri-badges-browser-');
  manager = new SnapshotManager(join(dataDir, 'snapshots'));
  state = await emptyState();
  const account = await state.createAccount({ email: 'personal@example.org', plan: 'personal' });
  token = (await state.createFeedToken(account.id)).token;
  const records = [...firstPublication(), ...many(5, 'Layered alloys', ODD, '2025-06-01')];
  version = (await ingestAndBuild(dataDir, join(dataDir, 'snapshots'), records)).version;
  await manager.start(50);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const config = loadConfig({ PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: base, WORKER_THREADS: '0' });
  server = await startServer(config, manager, state, () => {});
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  manager?.stop();
  await state?.close();
});

describe.skipIf(!RUN)('badges in a real browser', () => {
  it('each badge is well-formed XML: an svg with role img, its title and description', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/`);
    for (const path of [
      '/v1/badges/elements/Ni.svg',
      `/v1/badges/elements/Ni/history.svg?token=${token}`,
      `/v1/badges/subjects/topic/T500.svg?token=${token}`,
      `/v1/badges/subjects/topic/T500/history.svg?token=${token}`,
    ]) {
      // Evaluated as text: the browser's globals are not in this project's types (no DOM lib).
      const parsed = (await page.evaluate(`(async () => {
        const text = await (await fetch(${JSON.stringify(path)})).text();
        const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
        const svg = doc.documentElement;
        return {
          error: doc.getElementsByTagName('parsererror').length > 0,
          root: svg.localName,
          ns: svg.namespaceURI,
          role: svg.getAttribute('role'),
          title: svg.querySelector('title')?.textContent ?? null,
          desc: svg.querySelector('desc')?.textContent ?? null,
        };
      })()`)) as Record<string, unknown>;
      expect(parsed, path).toMatchObject({
        error: false,
        root: 'svg',
        ns: 'http://www.w3.org/2000/svg',
        role: 'img',
      });
      expect(parsed.title, path).toMatch(new RegExp(`RIS .*data version ${version}$`));
      expect(parsed.desc, path).toContain(`data version ${version}`);
      // The name reads back as it was written: escaped in the file, plain text once parsed.
      if (path.includes('T500')) expect(parsed.title, path).toContain(ODD_NAME);
    }
    await page.close();
  });

  for (const viewport of VIEWPORTS)
    it(`the element and subject pages offer the snippet at ${viewport.width} px, and its <img> loads`, async () => {
      const page = await browser.newPage({ viewport });
      for (const path of ['/elements/Ni', '/subjects/topic/T500']) {
        await page.goto(`${base}${path}`);
        const section = page.locator('section.embed');
        await section.scrollIntoViewIfNeeded();
        expect(await section.isVisible(), path).toBe(true);
        const html = await page.locator('#embed-html').inputValue();
        const markdown = await page.locator('#embed-markdown').inputValue();
        const src = /<img src="([^"]+)"/.exec(html)![1]!;
        expect(markdown).toContain(`](${src})`);
        expect(html).toContain(`<a href="${base}${path}">`);
        // No sideways scroll: the text areas wrap within the screen.
        const fits = (await page.evaluate(
          'document.documentElement.scrollWidth <= window.innerWidth',
        )) as boolean;
        expect(fits, `${path} at ${viewport.width}`).toBe(true);
        for (const id of ['#embed-html', '#embed-markdown']) {
          const box = (await page.locator(id).boundingBox())!;
          expect(box.x + box.width, id).toBeLessThanOrEqual(viewport.width);
        }
        // The snippet's image, from the address it prints (a subject's with a feed token in place
        // of FEED_TOKEN), loads in the page.
        const url = src.replace('FEED_TOKEN', token);
        const loaded = (await page.evaluate(`new Promise((resolve) => {
          const img = new Image();
          img.onload = () => resolve(img.naturalWidth);
          img.onerror = () => resolve(-1);
          img.src = ${JSON.stringify(url)};
        })`)) as number;
        expect(loaded, url).toBeGreaterThan(0);
        if (path.startsWith('/elements/')) {
          // The element page shows the badge itself.
          const shown = (await page.evaluate(`(() => {
            const img = document.querySelector('section.embed img');
            return img && img.complete ? img.naturalWidth : 0;
          })()`)) as number;
          expect(shown).toBeGreaterThan(0);
        }
      }
      await page.close();
    });
});

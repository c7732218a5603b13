#!/usr/bin/env node
// npm run bench:web: the pages as a browser meets them, on a `ri serve` in its own process.
//  1. server time of / and /elements/Fe: autocannon, one connection (no queueing), 5 s each,
//     with Accept-Encoding: gzip, deflate, br; budget p50 <= 10 ms.
//  2. page weight: the HTML and every stylesheet and script it loads, as sent (gzip) and
//     unpacked; budget <= 150 KB.
//  3. first contentful paint in Debian's chromium (playwright-core), median of 5 fresh loads.
// Uses the 1M-works bench data when present (npm run bench:build), else the bundled sample.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { benchDataDir, startBenchServer } from './serve.mjs';

const _root = resolve(import.meta.dirname, '..');
const dataDir = benchDataDir('web');
const server = await startBenchServer(dataDir, { plan: 'free', portBase: 19700 });
const headers = { 'accept-encoding': 'gzip, deflate, br' };
const PAGES = ['/', '/elements/Fe'];

const run = (opts) =>
  new Promise((ok, fail) => autocannon({ duration: 5, ...opts }, (err, r) => (err ? fail(err) : ok(r))));

const rows = [];
for (const path of PAGES) {
  await run({ url: `${server.base}${path}`, headers, connections: 1, duration: 1 });
  const one = await run({ url: `${server.base}${path}`, headers, connections: 1 });
  const ten = await run({ url: `${server.base}${path}`, headers, connections: 10 });
  rows.push({
    page: path,
    p50_ms_1conn: one.latency.p50,
    p99_ms_1conn: one.latency.p99,
    rps_10conn: Math.round(ten.requests.average),
    p50_ms_10conn: ten.latency.p50,
    non2xx: one.non2xx + ten.non2xx,
  });
}
console.table(rows);

// Page weight: the page and what it links (stylesheets, scripts, images).
const weights = [];
for (const path of PAGES) {
  const html = await (await fetch(`${server.base}${path}`)).text();
  const assets = [...html.matchAll(/<(?:link[^>]+href|script[^>]+src|img[^>]+src)="(\/[^"]+)"/g)].map(
    (m) => m[1],
  );
  let raw = Buffer.byteLength(html);
  let sent = gzipSync(html).length;
  for (const a of new Set(assets)) {
    const body = Buffer.from(await (await fetch(`${server.base}${a}`)).arrayBuffer());
    raw += body.length;
    sent += gzipSync(body).length;
  }
  weights.push({
    page: path,
    assets: assets.length,
    unpacked_kb: +(raw / 1024).toFixed(1),
    gzip_kb: +(sent / 1024).toFixed(1),
  });
}
console.table(weights);

// First contentful paint in a real browser, when chromium is installed.
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (existsSync(chromiumPath)) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
  const fcp = [];
  for (const path of PAGES) {
    const times = [];
    for (let i = 0; i < 5; i++) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      await page.goto(`${server.base}${path}`);
      const entry = await page.waitForFunction(
        () => performance.getEntriesByName('first-contentful-paint')[0],
      );
      times.push(await entry.evaluate((e) => e.startTime));
      await context.close();
    }
    times.sort((a, b) => a - b);
    fcp.push({ page: path, fcp_ms_median: Math.round(times[2]), fcp_ms_min: Math.round(times[0]) });
  }
  await browser.close();
  console.table(fcp);
} else console.error(`no chromium at ${chromiumPath}: first contentful paint not measured`);

await server.stop();

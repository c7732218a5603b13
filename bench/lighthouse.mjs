#!/usr/bin/env node
// Part of npm run bench:web: Lighthouse (12.8, mobile and desktop) on the home page, an element
// page and a subject page, as an anonymous reader meets them, on a `ri serve` in its own process
// (request log on, as npm start runs it). Budget: >= 95 in performance, accessibility, best
// practices and SEO. Uses Debian's chromium (/usr/bin/chromium, or CHROMIUM); writes the scores
// to bench/results/lighthouse-<date>.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';
import desktopConfig from 'lighthouse/core/config/desktop-config.js';
import { benchDataDir, startBenchServer } from './serve.mjs';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const PAGES = ['/', '/elements/Fe', '/subjects/topic/T10030'];
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];
const BUDGET = 95;

const server = await startBenchServer(benchDataDir('web'), { plan: 'free', portBase: 19800 });
// The flags this machine's closed network needs (no background connections to Google's hosts).
const chrome = await chromeLauncher.launch({
  chromePath: CHROMIUM,
  chromeFlags: [
    '--headless=new',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
const rows = [];
const failures = [];
try {
  for (const formFactor of ['mobile', 'desktop']) {
    for (const path of PAGES) {
      const result = await lighthouse(
        `${server.base}${path}`,
        { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: CATEGORIES },
        formFactor === 'desktop' ? desktopConfig : undefined,
      );
      const lhr = result.lhr;
      const row = { page: path, form: formFactor };
      for (const c of CATEGORIES) {
        const score = Math.round((lhr.categories[c]?.score ?? 0) * 100);
        row[c] = score;
        if (score < BUDGET) {
          // What cost the points: the failed audits of that category, by weight.
          const failed = lhr.categories[c].auditRefs
            .filter((r) => r.weight > 0 && (lhr.audits[r.id]?.score ?? 1) < 1)
            .map((r) => `${r.id} (${lhr.audits[r.id].displayValue ?? lhr.audits[r.id].score})`);
          failures.push(`${formFactor} ${path} ${c} ${score}: ${failed.join(', ')}`);
        }
      }
      rows.push(row);
    }
  }
} finally {
  await chrome.kill();
  await server.stop();
}
console.table(rows);
for (const f of failures) console.log(`below ${BUDGET}: ${f}`);
console.log(
  `Lighthouse: every page, both form factors, every category >= ${BUDGET}: ${failures.length === 0 ? 'met' : 'MISSED'}`,
);
const dir = resolve(import.meta.dirname, 'results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `lighthouse-${new Date().toISOString().slice(0, 10)}.json`);
writeFileSync(file, `${JSON.stringify({ budget: BUDGET, rows, failures }, null, 2)}\n`);
console.log(`written ${file}`);

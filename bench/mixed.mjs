#!/usr/bin/env node
// npm run bench:mixed: the traffic real clients send at once, against `ri serve` in its own
// process: 80% element and list reads, 15% subject reads, 5% research and lab quotes, keyed
// (Professional), with Accept-Encoding: gzip, deflate, br; at 50 and 200 connections for
// MIXED_SECONDS (default 30) each. Per route: requests, p50 and p99; errors; the server's RSS
// every second (flat after warm-up: no growth over the last 20 s) and its event-loop delay
// (from /metrics). Budget (issue 11): cached element reads p99 <= 15 ms at 50 connections while
// research and lab run; 0 errors; RSS flat. MIXED_CONNECTIONS=50,200 (default); MIXED_DIST=dir serves
// another build's dist/ (an A/B). The load generator is this process (keep-alive
// sockets, no fetch overhead); the server is another.
// Serves `node bench/mixed.mjs DATA_DIR` (or BENCH_DATA) when given, else the 1M-works bench data
// when present (npm run bench:build), else the bundled sample. The last line printed is a JSON
// summary per connection count (npm run bench:scale reads it).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { resolve } from 'node:path';
import { benchDataDir, startBenchServer } from './serve.mjs';

const _root = resolve(import.meta.dirname, '..');
const seconds = Number(process.env.MIXED_SECONDS ?? 30);
const dataDir = process.argv[2] ?? process.env.BENCH_DATA ?? benchDataDir('mixed');
const server = await startBenchServer(dataDir, {
  plan: 'professional',
  portBase: 19900,
  ...(process.env.MIXED_DIST ? { cliPath: resolve(process.env.MIXED_DIST, 'cli/main.js') } : {}),
});
const { port } = new URL(server.base);
const headers = { authorization: `Bearer ${server.key}`, 'accept-encoding': 'gzip, deflate, br' };

const SYMBOLS = ['Fe', 'Ni', 'Co', 'Cu', 'Zn', 'Ti', 'Pt', 'Au', 'Ag', 'Li', 'C', 'O', 'N', 'Si', 'Mo'];
const QUESTIONS = [
  'oxygen evolution nickel iron',
  'CO2 reduction copper',
  'perovskite solar cells stability',
  'lithium iron phosphate cathode',
  'single atom catalysts iron',
  'hydrogen storage magnesium alloys',
  'porous carbon',
  'platinum catalysts',
];
const LAB = ['Ni Fe', '(Ni OR Co) Fe', 'Cu -Pt', 'Li "lithium iron phosphate"', 'Ti O year:2020..'];

const get = (path, h = headers) =>
  new Promise((ok) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: h, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode, body: Buffer.concat(chunks) }));
    });
    req.on('error', () => ok({ status: 0, body: Buffer.alloc(0) }));
    req.end();
  });

// Subjects to read: topics and keywords found by searching (a free key opens search).
const subjects = [];
for (const q of ['oxygen evolution', 'lithium battery', 'catalyst', 'graphene', 'corrosion']) {
  const r = await get(`/v1/subjects/search?q=${encodeURIComponent(q)}`);
  if (r.status === 200) {
    const { gunzipSync, brotliDecompressSync } = await import('node:zlib');
    let text = r.body;
    try {
      text = brotliDecompressSync(r.body);
    } catch {
      try {
        text = gunzipSync(r.body);
      } catch {}
    }
    for (const s of JSON.parse(text.toString()).results.slice(0, 4)) subjects.push(s);
  }
}
if (subjects.length === 0) throw new Error('no subjects found to read');

/** One request of the mix: its route label and path. */
function pick(i) {
  const r = Math.random();
  const sym = SYMBOLS[i % SYMBOLS.length];
  if (r < 0.3) return ['element', `/v1/elements/${sym}`];
  if (r < 0.5) return ['elements', '/v1/elements'];
  if (r < 0.8) return ['element history', `/v1/elements/${sym}/history?resolution=monthly`];
  if (r < 0.95) {
    const s = subjects[i % subjects.length];
    return ['subject', `/v1/subjects/${s.subject_type}/${encodeURIComponent(s.subject_id)}`];
  }
  if (r < 0.975)
    return ['research', `/v1/research?q=${encodeURIComponent(QUESTIONS[i % QUESTIONS.length])}&page_size=5`];
  return ['lab quote', `/v1/lab/quote?q=${encodeURIComponent(LAB[i % LAB.length])}`];
}

function rss(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : null;
}

/** Metrics of one scrape of /metrics (each scrape starts the event-loop figures over). */
async function metrics(...names) {
  const r = await get('/metrics', {}); // uncompressed
  const lines = r.body.toString().split('\n');
  return names.map((name) => {
    const line = lines.find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    return line ? Number(line.split(' ').at(-1)) : null;
  });
}

async function run(connections) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const lat = new Map();
  let errors = 0;
  const byStatus = new Map();
  let n = 0;
  const rssSeries = [];
  const end = Date.now() + seconds * 1000;
  const sampler = setInterval(() => rssSeries.push(rss(server.child.pid)), 1000);
  const one = (label, path) =>
    new Promise((ok) => {
      const t0 = process.hrtime.bigint();
      const req = http.request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - t0) / 1e6;
          if (res.statusCode !== 200) {
            errors++;
            const k = `${label} ${res.statusCode}`;
            byStatus.set(k, (byStatus.get(k) ?? 0) + 1);
          }
          if (!lat.has(label)) lat.set(label, []);
          lat.get(label).push(ms);
          ok();
        });
      });
      req.on('error', () => {
        errors++;
        ok();
      });
      req.end();
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) {
        const [label, path] = pick(n++);
        await one(label, path);
      }
    }),
  );
  clearInterval(sampler);
  agent.destroy();
  const q = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  const rows = [...lat].map(([route, xs]) => {
    xs.sort((a, b) => a - b);
    return { route, requests: xs.length, p50_ms: +q(xs, 0.5).toFixed(2), p99_ms: +q(xs, 0.99).toFixed(2) };
  });
  // Growth over the last 20 s, robust to the collector's sawtooth: the median of the last 5
  // samples against the median of the 5 taken 20 s before them (two single samples moved by
  // +-15 MB from one collection to the next).
  const samples = rssSeries.filter((x) => x !== null);
  const medianOf = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const last20 =
    samples.length >= 25 ? medianOf(samples.slice(-5)) - medianOf(samples.slice(-25, -20)) : null;
  return {
    connections,
    rows,
    errors,
    byStatus: Object.fromEntries(byStatus),
    rps: Math.round(n / seconds),
    rss_mb: {
      start: rssSeries[0],
      end: rssSeries.at(-1),
      last20_growth: last20,
      every10s: rssSeries.filter((_, i) => i % 10 === 9),
    },
  };
}

// Warm up: every route once, and a few seconds of the mix.
for (let i = 0; i < 40; i++) await get(pick(i)[1]);
const summary = [];
for (const c of (process.env.MIXED_CONNECTIONS ?? '50,200').split(',').map(Number)) {
  const r = await run(c);
  const element = r.rows.find((x) => x.route === 'element');
  summary.push({
    connections: c,
    rps: r.rps,
    errors: r.errors,
    element_p99_ms: element?.p99_ms ?? null,
    rss_mb_start: r.rss_mb.start,
    rss_mb_end: r.rss_mb.end,
    rss_mb_max: Math.max(...r.rss_mb.every10s, r.rss_mb.end ?? 0),
    rss_mb_last20_growth: r.rss_mb.last20_growth,
  });
  console.log(
    `\n${c} connections, ${seconds} s: ${r.rps} requests/s, ${r.errors} errors ${JSON.stringify(r.byStatus)}, RSS ${JSON.stringify(r.rss_mb)} MB`,
  );
  console.table(r.rows);
}
const [p99, max] = await metrics('nodejs_eventloop_lag_p99_seconds', 'nodejs_eventloop_lag_max_seconds');
console.log(
  `event-loop delay (from /metrics, since the last scrape): p99 ${p99 === null ? '?' : (p99 * 1000).toFixed(1)} ms, max ${max === null ? '?' : (max * 1000).toFixed(1)} ms`,
);
await server.stop();
console.log(JSON.stringify({ mixed: summary }));

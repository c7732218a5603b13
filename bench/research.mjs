#!/usr/bin/env node
// npm run bench:research: latency of the research search (GET /v1/research) on cold questions
// (budget on the 1M-works snapshot, issue 11: p50 <= 20 ms, p99 <= 60 ms over HTTP). Every question
// of a fixed list (2-word, 3-4-word, rare-word, shorthand, paper=) is asked once: first to the core
// research() in this process, then over HTTP to `ri serve` with a Personal key (its own process, so
// its response cache is empty and every answer is computed), once with node:http (as curl or
// Python's requests ask) and once with Node's fetch, each against a fresh server (BENCH_CLIENTS).
// Prints p50/p95/p99/max for each: in process the wall time and the CPU time of each question (the CPU time is what the machine's
// other load does not inflate), over HTTP the client's time and the server's own (Server-Timing
// total) and the server's CPU time per question (all its threads, from /proc), with the load
// average before and after.
// Usage: node bench/research.mjs [DATA_DIR] (or BENCH_DATA; default: the 1M bench data in BENCH_DIR
// or .bench/, else the 100k one, else ./data). BENCH_HTTP=0 skips the HTTP part; BENCH_VERBOSE=1
// prints every question's time (stderr). As in a running server, an unlisted first question starts
// reading the titles' statistics (src/snapshot/title-stats.ts), which are waited for, then three
// more unlisted questions warm up (FTS index, JIT). The key lives in a throw-away state store under the system temp folder;
// DATA_DIR is only read. BENCH_ROOT: another checkout whose dist/ is measured (its core and its
// `ri serve`), as bench/research-ab.mjs runs it. The machine's other load shows in the tail: run it more than once.
import { existsSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { SYNTHETIC_QUESTIONS as QUESTIONS } from './research-questions.mjs';
import { cpuMsPerRequest, startBenchServer, untilIdle } from './serve.mjs';

const root = resolve(import.meta.dirname, '..');
const benchDir = resolve(process.env.BENCH_DIR ?? join(root, '.bench'));
const dataDir = [
  process.argv[2],
  process.env.BENCH_DATA,
  join(benchDir, 'data-1000000'),
  join(benchDir, 'data-100000'),
  join(root, 'data'),
].find((d) => d && existsSync(join(d, 'snapshots/CURRENT')));
if (!dataDir) throw new Error('no data directory with a snapshot: run npm run bench:build first');

const codeRoot = resolve(process.env.BENCH_ROOT ?? root);
const { SnapshotManager } = await import(join(codeRoot, 'dist/snapshot/snapshot.js'));
const { research, LENSES } = await import(join(codeRoot, 'dist/core/research.js'));
const manager = new SnapshotManager(join(dataDir, 'snapshots'));
await manager.start();
const snapshot = manager.acquire();
const n = snapshot.db.prepare('SELECT max(ordinal) FROM papers').pluck().get() + 1;

// paper= calls: by DOI and by title, at fixed places of the corpus.
const paperAt = (i) =>
  snapshot.db
    .prepare('SELECT doi, title FROM papers WHERE ordinal >= ? AND doi IS NOT NULL ORDER BY ordinal LIMIT 1')
    .get(Math.floor(n * i));
const PAPERS = [
  paperAt(0.123).doi,
  `https://doi.org/${paperAt(0.5).doi}`,
  paperAt(0.777).doi,
  paperAt(0.31).title,
];

const requests = [
  ...QUESTIONS.map((q) => ({ label: `q=${q}`, query: { q } })),
  ...PAPERS.map((paper) => ({ label: `paper=${paper}`, query: { paper } })),
];
const viewer = { hriAvailable: true, publicUrl: 'http://localhost' };

function stats(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
  const r = (v) => Math.round(v * 10) / 10;
  return { n: s.length, p50_ms: r(at(50)), p95_ms: r(at(95)), p99_ms: r(at(99)), max_ms: r(s.at(-1)) };
}

// Core: research() in this process. A few unlisted questions first open the FTS index and warm
// the JIT, as in a running server; the listed ones are each asked once.
const FIRST = 'catalysis';
const WARM_UP = ['zinc oxide nanoparticles', 'iridium oxide thin films acidic', 'copper sulfide thin films'];
// As in a running server after its first questions: the titles' statistics read (in a thread of
// their own, started by the first question) and the ranking taken from FTS5's bm25
// (src/core/research/title-ranking.ts); then the warm-up.
research(snapshot, { q: FIRST, pageSize: 10, lenses: [...LENSES], page: 1 }, viewer);
const statsStarted = performance.now();
const titleRanking = (await snapshot.reader.titleRankingReady?.()) ?? false;
console.error(
  `title ranking ${titleRanking ? 'ready' : 'unavailable'} after ${Math.round(performance.now() - statsStarted)} ms`,
);
for (const q of WARM_UP) research(snapshot, { q, pageSize: 10, lenses: [...LENSES], page: 1 }, viewer);
const load = () => loadavg().map((l) => Math.round(l * 100) / 100);
const loadBefore = load();
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const core = [];
const coreCpu = [];
const slowest = [];
for (const { label, query } of requests) {
  const c = cpuMs();
  const t = performance.now();
  let outcome;
  try {
    const a = research(snapshot, { ...query, pageSize: 10, lenses: [...LENSES], page: 1 }, viewer);
    outcome = `${a.matched_papers} matched`;
  } catch (e) {
    outcome = e.code ?? e.message;
  }
  const ms = performance.now() - t;
  core.push(ms);
  coreCpu.push(cpuMs() - c);
  slowest.push({ label, ms: Math.round(ms * 10) / 10, outcome });
}
snapshot.release();
manager.stop();

const result = { dataDir, version: snapshot.version, core: stats(core), core_cpu: stats(coreCpu) };
if (process.env.BENCH_VERBOSE)
  for (const r of slowest.sort((a, b) => b.ms - a.ms)) console.error(`${r.ms}\t${r.label}\t${r.outcome}`);
else result.slowest_core = slowest.sort((a, b) => b.ms - a.ms).slice(0, 5);

/**
 * One client's GET: node:http on a keep-alive connection (as curl or Python's requests ask: the
 * body read and decoded), or Node's fetch (undici), which takes about 4 ms more per answer than
 * either on the same server and questions (bench/results/scale-history.md). Resolves to [status, server-timing].
 */
const agent = new http.Agent({ keepAlive: true });
const CLIENTS = {
  http: (url, headers) =>
    new Promise((resolve, reject) => {
      const req = http.get(
        url,
        { agent, headers: { ...headers, 'accept-encoding': 'gzip, deflate, br' } },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const body = Buffer.concat(chunks);
            const enc = res.headers['content-encoding'];
            (enc === 'br' ? brotliDecompressSync(body) : enc === 'gzip' ? gunzipSync(body) : body).toString();
            resolve([res.statusCode, res.headers['server-timing'] ?? '']);
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
    }),
  fetch: async (url, headers) => {
    const res = await fetch(url, { headers });
    await res.text();
    return [res.status, res.headers.get('server-timing') ?? ''];
  },
};

/** The listed questions over HTTP, each once, against a server of their own (so every one is cold). */
async function overHttp(ask) {
  const server = await startBenchServer(dataDir, {
    plan: 'personal',
    portBase: 18800,
    cliPath: join(codeRoot, 'dist/cli/main.js'),
  });
  const { key } = server;
  const base = `${server.base}/v1/research?`;
  const headers = { authorization: `Bearer ${key}` };
  // The same unlisted warm-up questions, then every listed one once.
  await ask(base + new URLSearchParams({ q: FIRST }), headers);
  await untilIdle(server);
  for (const q of WARM_UP) await ask(base + new URLSearchParams({ q }), headers);
  const times = [];
  const serverTotal = [];
  const statuses = {};
  const slowestHttp = [];
  const serverCpu = server.cpuMs();
  for (const { label, query } of requests) {
    const t = performance.now();
    const [status, timing] = await ask(base + new URLSearchParams(query), headers);
    const ms = performance.now() - t;
    times.push(ms);
    // Server-Timing total: from the server's first middleware to its answer.
    const total = /total;dur=([\d.]+)/.exec(timing)?.[1];
    if (total !== undefined) serverTotal.push(Number(total));
    slowestHttp.push({ label, ms: Math.round(ms * 10) / 10, outcome: status });
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  const serverCpuPerQuestion = cpuMsPerRequest(serverCpu, server.cpuMs(), requests.length);
  await server.stop();
  const out = { ...stats(times), statuses };
  // The server's CPU (every thread: event loop, workers, compression) per question, on average.
  if (serverCpuPerQuestion !== null) out.server_cpu_ms_per_question = Number(serverCpuPerQuestion.toFixed(1));
  if (serverTotal.length > 0) out.server_total = stats(serverTotal);
  slowestHttp.sort((a, b) => b.ms - a.ms);
  if (process.env.BENCH_VERBOSE)
    for (const r of slowestHttp) console.error(`http ${r.ms}\t${r.label}\t${r.outcome}`);
  else out.slowest = slowestHttp.slice(0, 5);
  return out;
}

if (process.env.BENCH_HTTP !== '0') {
  // BENCH_CLIENTS: which clients, each against a fresh server (default both).
  for (const name of (process.env.BENCH_CLIENTS ?? 'http,fetch').split(','))
    result[name === 'http' ? 'http' : `http_${name}`] = await overHttp(CLIENTS[name]);
}

result.load_average = { before: loadBefore, after: load() };
console.log(JSON.stringify(result, null, 2));

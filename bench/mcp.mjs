#!/usr/bin/env node
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import { QUESTIONS } from './research-questions.mjs';
import { benchDataDir, cpuMsPerRequest, startBenchServer, untilIdle } from './serve.mjs';

const _root = resolve(import.meta.dirname, '..');
const duration = Number(process.env.BENCH_SECONDS ?? 5);
// BENCH_DATA=DIR serves that data folder (e.g. .bench/data-300000) instead of the default one.
const dataDir = process.env.BENCH_DATA ?? benchDataDir('mcp');
// Every server started adds its exit handlers (serve.mjs); the cold rounds start six more.
process.setMaxListeners(32);
const startServer = () => startBenchServer(dataDir, { plan: 'professional', portBase: 19400 });
let server = await startServer();
// Each server has its own key (the cold rounds start fresh servers).
const auth = () => ({ authorization: `Bearer ${server.key}` });
// BENCH_IDENTITY=1 leaves Accept-Encoding out (to see what compression costs).
const client = process.env.BENCH_IDENTITY ? {} : { 'accept-encoding': 'gzip, deflate, br' };
const mcpHeaders = () => ({
  ...client,
  ...auth(),
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
});
let id = 0;
const rpc = (name, args) =>
  JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } });

// One autocannon run, with the server's CPU time per request served (user + system, every thread).
async function run(opts) {
  const before = server.cpuMs();
  const r = await new Promise((ok, fail) =>
    autocannon({ connections: 50, duration, ...opts }, (err, res) => (err ? fail(err) : ok(res))),
  );
  r.cpuMsPerRequest = cpuMsPerRequest(before, server.cpuMs(), r.requests.total);
  return r;
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const row = (r) => ({
  rps: Math.round(r.requests.average),
  p50_ms: r.latency.p50,
  p99_ms: r.latency.p99,
  server_cpu_ms_per_req: r.cpuMsPerRequest,
  non2xx: r.non2xx,
});

// The same read by both doors, like for like: without a key (get_element_ri is public) and with
// the Professional key on both (a keyed call also hashes and looks up its key).
const mcpNoKey = () => {
  const { authorization: _, ...h } = mcpHeaders();
  return h;
};
const setups = {
  'no key': {
    rest: { url: `${server.base}/v1/elements/Fe`, headers: client },
    mcp: {
      url: `${server.base}/mcp`,
      method: 'POST',
      headers: mcpNoKey(),
      body: rpc('get_element_ri', { symbol: 'Fe' }),
    },
  },
  'Professional key': {
    rest: { url: `${server.base}/v1/elements/Fe`, headers: { ...client, ...auth() } },
    mcp: {
      url: `${server.base}/mcp`,
      method: 'POST',
      headers: mcpHeaders(),
      body: rpc('get_element_ri', { symbol: 'Fe' }),
    },
  },
};
// Alternating pairs (REST then MCP, then MCP then REST, ...): on a shared machine the load moves
// between two runs, so the ratio is taken within each pair and the median of the pairs reported.
const pairs = Number(process.env.BENCH_PAIRS ?? 4);
for (const [name, { rest, mcp }] of Object.entries(setups)) {
  await run({ ...rest, duration: 2 });
  await run({ ...mcp, duration: 2 });
  const ratios = [];
  const cpuRatios = [];
  for (let i = 0; i < pairs; i++) {
    const order = i % 2 === 0 ? ['rest', 'mcp'] : ['mcp', 'rest'];
    const got = {};
    for (const side of order) got[side] = row(await run(side === 'rest' ? rest : mcp));
    ratios.push(got.mcp.rps / got.rest.rps);
    const cpuRatio = got.mcp.server_cpu_ms_per_req / got.rest.server_cpu_ms_per_req;
    cpuRatios.push(cpuRatio);
    console.log(
      `${name}, pair ${i + 1}: GET /v1/elements/Fe ${JSON.stringify(got.rest)}; tools/call get_element_ri Fe ${JSON.stringify(got.mcp)}; MCP/REST requests/s ${(got.mcp.rps / got.rest.rps).toFixed(2)}, server CPU per request ${cpuRatio.toFixed(2)}`,
    );
  }
  const ratio = median(ratios);
  console.log(
    `${name}: MCP / REST requests/s, median of ${pairs} pairs: ${ratio.toFixed(2)} (pairs ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}; budget >= 0.40: ${ratio >= 0.4 ? 'met' : 'MISSED'}); server CPU per request MCP/REST ${median(cpuRatios).toFixed(2)}`,
  );
}

// Research and lab quotes: distinct inputs, each asked once by REST and once by MCP (alternating
// which goes first), so neither side is served from a cache the other warmed.
const LAB = [
  'Ni Fe',
  'Cu',
  '(Ni OR Co) Fe',
  'Li -Co',
  'Pt year:2020..',
  'O Ti',
  'Zn',
  'Mn O',
  'C N',
  'Fe year:2024',
  'Co',
  'Ag',
  'Au',
  'S Li',
  'Si',
  'Na',
  'Mo S',
  'Bi',
  'Ce O',
  'W',
];
// Server-Timing `total` (ms from the first middleware to the answer): the server's share alone.
const serverMs = (res) => Number(/total;dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '')?.[1]);
async function timed(fn) {
  const cpu = server.cpuMs();
  const t = performance.now();
  const res = await fn();
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`status ${res.status}`);
  // The server's CPU over this call: /proc counts in 10 ms ticks, so one call's share is coarse;
  // summed over a way's calls it is that way's CPU.
  return { ms: performance.now() - t, server: serverMs(res), cpu: server.cpuMs() - cpu };
}
const viaMcp = (tool, args) => () =>
  fetch(`${server.base}/mcp`, { method: 'POST', headers: mcpHeaders(), body: rpc(tool, args) });

/**
 * MCP against another way as the median of per-input ratios (the same input and round on both):
 * inputs differ in cost, so a ratio of two medians would compare different inputs.
 */
const paired = (times, base, what = 'ms') => median(times.mcp[what].map((m, i) => m / times[base][what][i]));

/**
 * Each input asked once by every way (the order turning with the input), `rounds` times over; the
 * first round only warms (the snapshot's memos, the JIT), the later ones are reported (warm). MCP
 * against each REST way: client p50 and server p50 (Server-Timing). The cold case: coldCompare.
 */
async function compare(label, inputs, ways, rounds = 1) {
  const names = Object.keys(ways);
  const cold = Object.fromEntries(names.map((n) => [n, { ms: [], server: [], cpu: [] }]));
  const warm = Object.fromEntries(names.map((n) => [n, { ms: [], server: [], cpu: [] }]));
  for (let round = 0; round < rounds; round++) {
    for (const [i, input] of inputs.entries()) {
      const k = (i + round) % names.length;
      for (const name of [...names.slice(k), ...names.slice(0, k)]) {
        const t = await timed(ways[name](input, round));
        const into = (round === 0 ? cold : warm)[name];
        into.ms.push(t.ms);
        into.server.push(t.server);
        into.cpu.push(t.cpu);
      }
    }
  }
  const report = (phase, times) => {
    if (times.mcp.ms.length === 0) return;
    const cpuPerCall = (n) => times[n].cpu.reduce((a, b) => a + b, 0) / times[n].cpu.length;
    const p = (n) =>
      `${n} ${median(times[n].ms).toFixed(2)} ms (server ${median(times[n].server).toFixed(2)}, server CPU ${cpuPerCall(n).toFixed(2)} ms/call)`;
    const ratios = names
      .filter((n) => n !== 'mcp')
      .map(
        (n) => `MCP/${n} ${paired(times, n).toFixed(2)} (server ${paired(times, n, 'server').toFixed(2)})`,
      );
    console.log(
      `${label} ${phase}, p50 over ${times.mcp.ms.length} calls: ${names.map(p).join(', ')}; per-input median ${ratios.join(', ')}`,
    );
  };
  report('warm', warm);
  return { warm, report };
}

/**
 * The first ask of each input, each way on a server of its own started fresh (every question new
 * to it): asked on one server by both ways, the second way would find what the first left in the
 * snapshot's memos (a word's title count, the lab's sets), and the per-input ratios would swing
 * between two modes by the order. Two passes in opposite orders; per input and way, the faster.
 * Each server has answered one other input and is idle (its statistics read) before the timed ones.
 */
const WARM_UP = 'zeolite membranes';
async function coldCompare(inputs, ways, report) {
  const names = Object.keys(ways);
  const passes = [];
  for (const name of [...names, ...names.slice().reverse()]) {
    await server.stop();
    server = await startServer();
    // New questions, not a new server: one question outside the list first (the worker reads its
    // columns and starts the titles' statistics), then the server left until it is idle (the
    // statistics read: over 3 s at 1M works).
    await (await ways[name](WARM_UP, 0)()).arrayBuffer();
    await untilIdle(server);
    const t = { ms: [], server: [], cpu: [] };
    for (const input of inputs) {
      const r = await timed(ways[name](input, 0));
      t.ms.push(r.ms);
      t.server.push(r.server);
      t.cpu.push(r.cpu);
    }
    passes.push([name, t]);
  }
  const cold = Object.fromEntries(names.map((n) => [n, { ms: [], server: [], cpu: [] }]));
  for (const n of names) {
    const [a, b] = passes.filter(([name]) => name === n).map(([, t]) => t);
    for (const what of ['ms', 'server', 'cpu'])
      cold[n][what] = a[what].map((x, i) => Math.min(x, b[what][i]));
  }
  report('cold (fresh server per way)', cold);
  return cold;
}

// Research: a repeated question is a cache hit on both doors, so each later round asks another
// page size (6, 7, ...): the answer is computed again over data the first round warmed.
const researchSize = (round) => (round === 0 ? 5 : 5 + round);
const researchWays = {
  rest: (q, round) => () =>
    fetch(`${server.base}/v1/research?q=${encodeURIComponent(q)}&page_size=${researchSize(round)}`, {
      headers: { ...client, ...auth() },
    }),
  mcp: (q, round) => viaMcp('research', { q, page_size: researchSize(round) }),
};
const research = await compare(
  'research',
  QUESTIONS,
  researchWays,
  Number(process.env.BENCH_RESEARCH_ROUNDS ?? 4),
);
research.cold = await coldCompare(QUESTIONS, researchWays, research.report);
// Lab quotes are never cached, so every round computes them again. An MCP call is a POST with a
// JSON body: POST /v1/lab/quote with the same headers is the like-for-like baseline; GET is shown too.
const labWays = {
  get: (q) => () =>
    fetch(`${server.base}/v1/lab/quote?q=${encodeURIComponent(q)}`, { headers: { ...client, ...auth() } }),
  post: (q) => () =>
    fetch(`${server.base}/v1/lab/quote`, {
      method: 'POST',
      headers: { ...client, ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ query: q }),
    }),
  mcp: (q) => viaMcp('lab_quote', { query: q }),
};
const lab = await compare('lab_quote', LAB, labWays, Number(process.env.BENCH_LAB_ROUNDS ?? 6));
lab.cold = await coldCompare(LAB, labWays, lab.report);
const verdict = (name, ratio) =>
  console.log(`${name}: ${ratio.toFixed(2)} (budget <= 1.10: ${ratio <= 1.1 ? 'met' : 'MISSED'})`);
verdict('research MCP/REST, per-input median (cold)', paired(research.cold, 'rest'));
verdict('research MCP/REST, per-input median (warm)', paired(research.warm, 'rest'));
verdict('lab_quote MCP/POST, per-input median (cold)', paired(lab.cold, 'post'));
verdict('lab_quote MCP/POST, per-input median (warm)', paired(lab.warm, 'post'));
await server.stop();

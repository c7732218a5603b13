#!/usr/bin/env node
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import { benchDataDir, startBenchServer } from './serve.mjs';

const _root = resolve(import.meta.dirname, '..');
const duration = Number(process.env.BENCH_SECONDS ?? 10);
const dataDir = benchDataDir('mcp');
const server = await startBenchServer(dataDir, { plan: 'professional', portBase: 19400 });
const auth = { authorization: `Bearer ${server.key}` };
// BENCH_IDENTITY=1 leaves Accept-Encoding out (to see what compression costs).
const client = process.env.BENCH_IDENTITY ? {} : { 'accept-encoding': 'gzip, deflate, br' };
const mcpHeaders = {
  ...client,
  ...auth,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};
let id = 0;
const rpc = (name, args) =>
  JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } });

const run = (opts) =>
  new Promise((ok, fail) =>
    autocannon({ connections: 50, duration, ...opts }, (err, r) => (err ? fail(err) : ok(r))),
  );
const row = (r) => ({
  rps: Math.round(r.requests.average),
  p50_ms: r.latency.p50,
  p99_ms: r.latency.p99,
  non2xx: r.non2xx,
});

const restOpts = { url: `${server.base}/v1/elements/Fe`, headers: client };
const mcpOpts = {
  url: `${server.base}/mcp`,
  method: 'POST',
  headers: mcpHeaders,
  body: rpc('get_element_ri', { symbol: 'Fe' }),
};
await run({ ...restOpts, duration: 2 });
await run({ ...mcpOpts, duration: 2 });
const rest = row(await run(restOpts));
const mcp = row(await run(mcpOpts));
const ratio = mcp.rps / rest.rps;
console.log(`GET /v1/elements/Fe:             ${JSON.stringify(rest)}`);
console.log(`tools/call get_element_ri Fe:    ${JSON.stringify(mcp)}`);
console.log(
  `MCP / REST requests/s: ${ratio.toFixed(2)} (budget >= 0.40: ${ratio >= 0.4 ? 'met' : 'MISSED'})`,
);

// Research and lab quotes: distinct inputs, each asked once by REST and once by MCP (alternating
// which goes first), so neither side is served from a cache the other warmed.
const QUESTIONS = [
  'oxygen evolution nickel iron',
  'co2 reduction copper',
  'lithium ion battery cathode',
  'hydrogen evolution platinum',
  'perovskite solar cell stability',
  'zeolite catalysis',
  'sodium ion anode',
  'ammonia synthesis',
  'graphene oxide membrane',
  'solid electrolyte interphase',
  'methane oxidation',
  'titanium dioxide photocatalysis',
  'cobalt free cathode',
  'nitrogen reduction',
  'water splitting photoanode',
  'fuel cell membrane',
  'silicon anode',
  'rare earth magnets',
  'groundwater arsenic',
  'reservoir permeability',
  'shale gas adsorption',
  'carbon capture amine',
  'iron oxide nanoparticles',
  'copper corrosion',
  'nickel hydroxide',
  'manganese oxide supercapacitor',
  'zinc air battery',
  'bismuth vanadate',
  'gold nanoparticle catalysis',
  'sulfur cathode lithium',
];
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
async function timed(fn) {
  const t = performance.now();
  const res = await fn();
  await res.arrayBuffer();
  return { ms: performance.now() - t, status: res.status };
}
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function compare(label, inputs, restUrl, tool, args) {
  const r = [];
  const m = [];
  for (const [i, input] of inputs.entries()) {
    const viaRest = () => fetch(restUrl(input), { headers: { ...client, ...auth } });
    const viaMcp = () =>
      fetch(`${server.base}/mcp`, { method: 'POST', headers: mcpHeaders, body: rpc(tool, args(input)) });
    if (i % 2 === 0) {
      r.push((await timed(viaRest)).ms);
      m.push((await timed(viaMcp)).ms);
    } else {
      m.push((await timed(viaMcp)).ms);
      r.push((await timed(viaRest)).ms);
    }
  }
  const ratio = median(m) / median(r);
  console.log(
    `${label}: REST p50 ${median(r).toFixed(1)} ms, MCP p50 ${median(m).toFixed(1)} ms over ${inputs.length} inputs; ` +
      `MCP/REST ${ratio.toFixed(2)} (budget <= 1.10: ${ratio <= 1.1 ? 'met' : 'MISSED'})`,
  );
}
await compare(
  'research',
  QUESTIONS,
  (q) => `${server.base}/v1/research?q=${encodeURIComponent(q)}&page_size=5`,
  'research',
  (q) => ({ q, page_size: 5 }),
);
await compare(
  'lab_quote',
  LAB,
  (q) => `${server.base}/v1/lab/quote?q=${encodeURIComponent(q)}`,
  'lab_quote',
  (q) => ({ query: q }),
);
await server.stop();

#!/usr/bin/env node
// npm run bench:worker-memory: the resident memory of one `ri serve` (with its research and lab
// worker threads) while it is asked thousands of distinct research questions and lab quotes, the
// load that grows a worker's caches. Prints RSS before, peak and after (VmRSS, sampled every
// 100 ms) and the answers by status. A quick way to try a memory setting before a full soak.
//   WORKER_THREADS, MALLOC_ARENA_MAX, NODE_OPTIONS, ... are passed through to the server; BENCH_DATA:
//   a data folder. As deploy/nginx.conf launches a replica: MALLOC_ARENA_MAX=2
//   NODE_OPTIONS='--max-semi-space-size=4 --max-old-space-size=512' (peak 210 MB, 224-250 without
//   the old-generation limit, on the bundled sample).
//   BENCH_CALLS (default 3000), BENCH_CONNECTIONS (default 8).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOSTILE_STRINGS } from './hostile-strings.mjs';
import { startBenchServer } from './serve.mjs';

const calls = Number(process.env.BENCH_CALLS ?? 3000);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 8);
// The bundled sample, as the soak serves it (BENCH_DATA: another data folder).
const dataDir = process.env.BENCH_DATA ?? mkdtempSync(join(tmpdir(), 'ri-bench-memory-'));
const server = await startBenchServer(dataDir, { plan: 'professional', portBase: 19900 });
const auth = { authorization: `Bearer ${server.key}`, 'accept-encoding': 'gzip, deflate, br' };

function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

// Distinct questions: pairs of words from a chemistry vocabulary, element symbols, hostile strings.
const WORDS = `oxide catalyst battery cathode anode electrolyte membrane alloy corrosion film nanoparticle
  perovskite zeolite polymer ceramic glass magnet superconductor semiconductor photocatalysis hydrogen
  oxygen nitrogen carbon sulfur lithium sodium potassium magnesium calcium iron nickel cobalt copper zinc
  manganese chromium titanium vanadium platinum palladium gold silver tungsten molybdenum graphene
  adsorption diffusion sintering doping thermal optical magnetic reduction oxidation evolution storage`
  .split(/\s+/)
  .filter(Boolean);
const SYMBOLS = [
  'Fe',
  'Ni',
  'Co',
  'Cu',
  'Zn',
  'Mn',
  'Cr',
  'Ti',
  'V',
  'Pt',
  'Pd',
  'Au',
  'Ag',
  'W',
  'Mo',
  'Li',
];
let seed = 1;
const rand = (n) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
function nextPath(i) {
  if (i % 10 === 9) {
    const h = HOSTILE_STRINGS[rand(HOSTILE_STRINGS.length)];
    return i % 20 === 9
      ? `/v1/research?q=${encodeURIComponent(h)}`
      : `/v1/lab/quote?q=${encodeURIComponent(h)}`;
  }
  if (i % 3 === 0) {
    const q = `${SYMBOLS[rand(SYMBOLS.length)]} ${SYMBOLS[rand(SYMBOLS.length)]} year:${2000 + rand(25)}..`;
    return `/v1/lab/quote?q=${encodeURIComponent(q)}`;
  }
  const q = `${WORDS[rand(WORDS.length)]} ${WORDS[rand(WORDS.length)]} ${WORDS[rand(WORDS.length)]}`;
  return `/v1/research?q=${encodeURIComponent(q)}&page=${1 + rand(3)}`;
}

const samples = [];
const before = rssMb(server.child.pid);
const timer = setInterval(() => {
  const r = rssMb(server.child.pid);
  if (r !== null) samples.push(r);
}, 100);
const statuses = {};
let next = 0;
const started = performance.now();
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (next < calls) {
      const i = next++;
      const res = await fetch(`${server.base}${nextPath(i)}`, { headers: auth });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
await new Promise((r) => setTimeout(r, 2000));
clearInterval(timer);
const after = rssMb(server.child.pid);
const peak = Math.max(...samples);
console.log(
  JSON.stringify({
    calls,
    seconds: Number(seconds.toFixed(1)),
    statuses,
    rss_mb: { before: Math.round(before), peak: Math.round(peak), after: Math.round(after) },
    env: {
      WORKER_THREADS: process.env.WORKER_THREADS ?? '(default)',
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '(default)',
      NODE_OPTIONS: process.env.NODE_OPTIONS ?? '(none)',
    },
  }),
);
await server.stop();

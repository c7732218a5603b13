#!/usr/bin/env node
// A/B of cached reads between two compiled builds of the service, each against the bare route
// (bare-route.mjs, its own process, the bytes A answers): for each row, PAIRS rounds of a short
// run of the bare route, then A and B (B and A every other round), back to back. Prints, per
// row, the median of each build's requests/s over the bare route's in its round and of its CPU
// time per request (user + system, from /proc), and B's CPU over A's.
//   node bench/http-ab.mjs A_DIST B_DIST   (PAIRS=6, AB_SECONDS=3; e.g. a copy of dist/ made at
//   the session's start, and dist/)
// Uses the 1M-works bench data when present (npm run bench:build), else the bundled sample.
import { join, resolve } from 'node:path';
import { BROWSER, measure, median, PATHS, rounds, startBare } from './cached-reads.mjs';
import { benchDataDir, startBenchServer } from './serve.mjs';

const [aDist, bDist] = process.argv.slice(2).map((p) => resolve(p));
if (!bDist) throw new Error('usage: node bench/http-ab.mjs A_DIST B_DIST');
const count = Number(process.env.PAIRS ?? 6);
const seconds = Number(process.env.AB_SECONDS ?? 3);

const dataDir = benchDataDir('http-ab');
// A first, alone: on an empty folder it builds the bundled sample, which B then serves too.
const a = await startBenchServer(dataDir, { cliPath: join(aDist, 'cli/main.js'), portBase: 18400 });
const b = await startBenchServer(dataDir, { cliPath: join(bDist, 'cli/main.js'), portBase: 18800 });
const bare = await startBare(a.base);
const targets = {
  bare,
  A: { base: a.base, pid: a.child.pid, key: a.key },
  B: { base: b.base, pid: b.child.pid, key: b.key },
};

const rows = [
  { name: 'Fe br', path: PATHS[0], headers: BROWSER },
  { name: 'list br', path: PATHS[1], headers: BROWSER },
  { name: 'Fe br keyed', path: PATHS[0], headers: BROWSER, keyed: true },
  { name: 'Fe identity', path: PATHS[0], headers: {} },
  { name: 'Fe identity keyed', path: PATHS[0], headers: {}, keyed: true },
];

// Warm-up: JIT, the response caches, connections; not reported.
for (const row of rows) for (const t of Object.values(targets)) await measure(t, row, 1);

console.log(
  `${count} rounds of ${seconds} s per process and row; ratios: requests/s over the bare route's in the same round`,
);
const gen = (rs) =>
  `${median(rs.map((r) => r.generatorUs)).toFixed(1)} (${median(rs.map((r) => r.generatorShare)).toFixed(2)})`;
const fmt = (xs) => xs.map((x) => x.toFixed(2)).join(' ');
for (const row of rows) {
  const { runs, ratios } = await rounds(targets, row, { rounds: count, seconds });
  const cpu = (name) => median(runs[name].map((r) => r.cpuUs));
  console.log(
    `${row.name}: ratio A ${median(ratios.A).toFixed(2)} [${fmt(ratios.A)}], B ${median(ratios.B).toFixed(2)} [${fmt(ratios.B)}]; ` +
      `CPU us/req bare ${cpu('bare').toFixed(1)}, A ${cpu('A').toFixed(1)}, B ${cpu('B').toFixed(1)} (B/A ${(cpu('B') / cpu('A')).toFixed(2)}); ` +
      `p99 ms A ${median(runs.A.map((r) => r.p99))}, B ${median(runs.B.map((r) => r.p99))}; ` +
      `load generator us/req (share of a core) bare ${gen(runs.bare)}, A ${gen(runs.A)}, B ${gen(runs.B)}`,
  );
}
await Promise.all([a.stop(), b.stop()]);
bare.stop();

#!/usr/bin/env node
// npm run bench:http-calibrate: what one microsecond of a server's own work costs in bench:http's
// measure (CPU per request under autocannon, 50 connections, on this machine), and so how much
// more work per cached read than the bare route the budget allows here.
//
// The bare route (bare-route.mjs) is run with 0, 5, 10 and 20 us of busy work per answer
// (BARE_WORK_US), beside one service process as `npm start` runs it, in alternating rounds. A line
// through the bare routes' CPU per request gives the slope: measured microseconds per microsecond
// of work. Above 1, the measure adds to each microsecond of work the cost of the waits it makes:
// the slower server finds the load generator asleep more often and pays, in its own system time,
// for waking it (and for sleeping and waking itself). The service's own work is then read off the
// same line, and the budget's ratio r allows (bare/r - bare)/slope microseconds of it.
//   BENCH_PATH (default /v1/elements/Fe), BENCH_BR=1 (Accept-Encoding: gzip, deflate, br),
//   BENCH_KEYED=1, BENCH_ROUNDS (default 5), BENCH_SECONDS (default 4), WORK_US (default 0,5,10,20)
import { BROWSER, measure, median, rounds, startBare } from './cached-reads.mjs';
import { benchDataDir, startBenchServer } from './serve.mjs';

const row = {
  path: process.env.BENCH_PATH ?? '/v1/elements/Fe',
  headers: process.env.BENCH_BR === '1' ? BROWSER : {},
  keyed: process.env.BENCH_KEYED === '1',
};
const works = (process.env.WORK_US ?? '0,5,10,20').split(',').map(Number);
if (works[0] !== 0) throw new Error('WORK_US must start with 0 (the bare route itself)');
const server = await startBenchServer(benchDataDir('http'), { plan: 'personal' });
const targets = { service: { base: server.base, pid: server.child.pid, key: server.key } };
// The bare route's name for each amount of work (rounds() measures `bare` first, as its baseline).
const names = works.map((w, i) => (i === 0 ? 'bare' : `bare+${w}us`));
const bares = [];
for (const [i, workUs] of works.entries()) {
  const port = Number(new URL(server.base).port) + 1000 + i;
  bares.push(await startBare(server.base, { workUs, port }));
  targets[names[i]] = bares.at(-1);
}
// Warm-up (JIT, the response cache, connections), not reported.
for (const target of Object.values(targets)) await measure(target, row, 2);
const { runs } = await rounds(targets, row, {
  rounds: Number(process.env.BENCH_ROUNDS ?? 5),
  seconds: Number(process.env.BENCH_SECONDS ?? 4),
});
const cpu = Object.fromEntries(
  Object.entries(runs).map(([name, r]) => [name, median(r.map((x) => x.cpuUs))]),
);

// Least squares through (work, CPU per request) of the bare routes.
const points = works.map((w, i) => [w, cpu[names[i]]]);
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
const mw = mean(points.map(([w]) => w));
const mc = mean(points.map(([, c]) => c));
const slope =
  points.reduce((s, [w, c]) => s + (w - mw) * (c - mc), 0) / points.reduce((s, [w]) => s + (w - mw) ** 2, 0);
const base = mc - slope * mw;
const workOf = (c) => (c - base) / slope;
const allowed = (ratio) => (base / ratio - base) / slope;

const round1 = (x) => Math.round(x * 10) / 10;
const result = {
  row: `${row.path}${row.keyed ? ' keyed' : ''} ${process.env.BENCH_BR === '1' ? 'br' : 'identity'}`,
  cpu_us_per_req: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, round1(v)])),
  slope: Math.round(slope * 100) / 100,
  bare_us: round1(base),
  service_work_us: round1(workOf(cpu.service)),
  ratio: Math.round((cpu.bare / cpu.service) * 100) / 100,
  allowed_work_us: { 'ratio 0.6': round1(allowed(0.6)), 'ratio 0.5': round1(allowed(0.5)) },
};
console.log(JSON.stringify(result, null, 2));
console.log(
  `${result.row}: each us of a server's own work costs ${result.slope} us of CPU per request here. ` +
    `The service does about ${result.service_work_us} us more work per request than the bare route ` +
    `(ratio ${result.ratio}); a ratio of 0.6 allows ${result.allowed_work_us['ratio 0.6']} us, ` +
    `0.5 allows ${result.allowed_work_us['ratio 0.5']} us.`,
);
await server.stop();
for (const bare of bares) await bare.stop();
process.exit(0);

#!/usr/bin/env node
// npm run bench:http: CPU per request, requests/s and latency of cached reads, against a bare
// @hono/node-server route in its own process serving the same bytes with the same
// Content-Encoding (bare-route.mjs). The budget is judged by CPU per request (the bare route's
// over the service's); requests/s is printed beside it. Every row is run
// without Accept-Encoding and with `Accept-Encoding: gzip, deflate, br` (what browsers, Node's fetch and Python's requests send),
// anonymous and keyed, 50 connections; plus the p50 of subject search with one connection, and
// whether each point of the budget is met.
// Each row is BENCH_ROUNDS rounds (default 4) of a BENCH_SECONDS run (default 3) of the bare route
// and then of each service process, back to back: the ratio of a round compares processes measured
// within seconds of each other (this machine's speed swings by half within a minute, so rows
// measured one after the other gave ratios from 0.45 to 0.76 for the same code). The load
// generator (autocannon, in this process) needs most of a core at these rates, and more per answer
// for the service's longer header block (its parser is JavaScript): its CPU per request is printed
// too. The service runs in BENCH_PROCESSES processes (default 3), each measured in every round:
// one process of a build can cost a tenth or more per request above another for its whole life
// (per-process choices of V8's), so a row's ratio is the median over the processes of each one's
// median, printed per process.
// Uses the 1M-works bench data when present (npm run bench:build), else the bundled sample.
import { BROWSER, load, measure, median, PATHS, rounds, startBare } from './cached-reads.mjs';
import { benchDataDir, startBenchServer } from './serve.mjs';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const count = Number(process.env.BENCH_ROUNDS ?? 4);
const dataDir = benchDataDir('http');
const processes = Number(process.env.BENCH_PROCESSES ?? 3);
const servers = [];
for (let i = 0; i < processes; i++)
  servers.push(await startBenchServer(dataDir, { plan: 'personal', portBase: 18600 + 200 * i }));
const [server] = servers;
const services = Object.fromEntries(
  servers.map((s, i) => [`service${i + 1}`, { base: s.base, pid: s.child.pid, key: s.key }]),
);
const bare = await startBare(server.base);
const targets = { bare, ...services };

// The budget, by CPU per request against the bare route: >= 0.6 for Fe and the list, keyed Fe
// >= 0.5, with and without `Accept-Encoding: gzip, deflate, br`, p99 <= 10 ms.
const rows = [];
for (const [encoding, headers] of Object.entries({ identity: {}, br: BROWSER }))
  for (const [path, keyed, line] of [
    [PATHS[0], false, 0.6],
    [PATHS[1], false, 0.6],
    [PATHS[0], true, 0.5],
  ])
    rows.push({
      name: `${path}${keyed ? ' keyed' : ''} ${encoding}`,
      path,
      headers,
      keyed,
      line,
    });

// Warm-up (JIT, the response cache, connection set-up), not reported.
const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
// Keyed rows with the key, so that its first lookup is not in a measured run.
for (const row of rows) for (const target of Object.values(targets)) await measure(target, row, warmup);

const results = {};
for (const row of rows) {
  const { runs, ratios, cpuRatios } = await rounds(targets, row, { rounds: count, seconds });
  const summary = (rs) => ({
    rps: Math.round(median(rs.map((r) => r.rps))),
    p50_ms: median(rs.map((r) => r.p50)),
    p99_ms: median(rs.map((r) => r.p99)),
    cpu_us_per_req: Number(median(rs.map((r) => r.cpuUs))?.toFixed(1)),
    generator_us_per_req: Number(median(rs.map((r) => r.generatorUs)).toFixed(1)),
    generator_core_share: Number(median(rs.map((r) => r.generatorShare)).toFixed(2)),
  });
  const names = Object.keys(services);
  const perProcess = (xs) => names.map((n) => Number(median(xs[n]).toFixed(2)));
  results[row.name] = {
    bare: summary(runs.bare),
    service: summary(names.flatMap((n) => runs[n])),
    cpu_ratio: median(perProcess(cpuRatios)),
    cpu_ratios_per_process: perProcess(cpuRatios),
    rps_ratio: median(perProcess(ratios)),
    rps_ratios_per_process: perProcess(ratios),
  };
}
const search = await load(`${server.base}/v1/subjects/search?q=electrocatalyst%20oxygen%20evolution`, {
  connections: 1,
  duration: seconds,
  headers: { authorization: `Bearer ${server.key}` },
});
results['search (1 connection)'] = {
  rps: Math.round(search.requests.average),
  p50_ms: search.latency.p50,
  p99_ms: search.latency.p99,
};
for (const s of servers) await s.stop();
bare.stop();

console.log(JSON.stringify({ dataDir, seconds, rounds: count, results }, null, 2));
for (const row of rows) {
  const r = results[row.name];
  const ok = r.cpu_ratio >= row.line && r.service.p99_ms <= 10;
  console.log(
    `${row.name}: CPU ${r.service.cpu_us_per_req} us/req (bare ${r.bare.cpu_us_per_req}), ratio ${r.cpu_ratio} [per process ${r.cpu_ratios_per_process.join(' ')}] (budget ${row.line}); ` +
      `${r.service.rps} rps (bare ${r.bare.rps}), ratio ${r.rps_ratio} [${r.rps_ratios_per_process.join(' ')}]; ` +
      `p99 ${r.service.p99_ms} ms (bare ${r.bare.p99_ms}), ` +
      `load generator ${r.service.generator_us_per_req} us/req (bare ${r.bare.generator_us_per_req}) ${ok ? 'ok' : 'MISSED'}`,
  );
}

#!/usr/bin/env node
// node bench/versions.mjs: pinned reads of a non-current data version against current-version
// reads, in the same run (autocannon, 50 connections, BENCH_SECONDS each, after a warm-up). The
// server (`ri serve`, its own process) builds the bundled sample (version A), then `ri update`
// publishes version B from a small synthetic partition; A is then asked for with data_version=A
// and with the RI-Data-Version header. Budget (issue 12): pinned reads within 10% of current
// reads (requests/s ratio >= 0.90, best of the repeats of each row). BENCH_REPEAT=n (default 3)
// repeats the rows n times, interleaved.
// Always the bundled sample: pinning costs the same per request whatever the corpus size, and a
// publish into the shared bench data folder would change it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { startBenchServer } from './serve.mjs';

const root = resolve(import.meta.dirname, '..');
const cli = join(root, 'dist/cli/main.js');
const duration = Number(process.env.BENCH_SECONDS ?? 10);
const repeat = Number(process.env.BENCH_REPEAT ?? 3);
const dataDir = mkdtempSync(join(tmpdir(), 'ri-bench-versions-'));

const server = await startBenchServer(dataDir, { plan: 'personal', portBase: 19200 });
const base = server.base;
const versionOf = async () => (await (await fetch(`${base}/v1/elements/Fe`)).json()).data_version;
const versionA = await versionOf();

// Version B: a small synthetic partition ingested, built and published by `ri update`.
const partition = mkdtempSync(join(tmpdir(), 'ri-bench-partition-'));
const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
for (const args of [
  ['generate', '--works', '500', '--seed', '12', '--out', partition],
  ['update', partition],
]) {
  const r = spawnSync(process.execPath, [cli, ...args], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ri ${args[0]}: ${r.stderr}`);
}
let versionB = versionA;
for (let i = 0; i < 200 && versionB === versionA; i++) {
  await new Promise((ok) => setTimeout(ok, 50));
  versionB = await versionOf();
}
if (versionB === versionA) throw new Error('the server did not switch to the new version');

// Each pinned answer must be A's, and not B's (else the rows would measure the same thing).
const pinnedFe = await (await fetch(`${base}/v1/elements/Fe?data_version=${versionA}`)).json();
if (pinnedFe.data_version !== versionA) throw new Error('data_version=A did not answer from A');

function run(url, headers = {}, seconds = duration) {
  return new Promise((ok, fail) =>
    autocannon({ url, connections: 50, duration: seconds, headers }, (err, r) => (err ? fail(err) : ok(r))),
  );
}
const cpuTicks = (pid) => {
  const statPath = `/proc/${pid}/stat`;
  if (!existsSync(statPath)) return null;
  const fields = readFileSync(statPath, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
async function measure(url, headers) {
  const before = cpuTicks(server.child.pid);
  const r = await run(url, headers);
  const after = cpuTicks(server.child.pid);
  return {
    rps: Math.round(r.requests.average),
    p50_ms: r.latency.p50,
    p99_ms: r.latency.p99,
    non2xx: r.non2xx,
    // Clock ticks are 10 ms on Linux (getconf CLK_TCK = 100).
    ...(before !== null && after !== null
      ? { cpu_us_per_req: Math.round(((after - before) * 10_000) / Math.max(1, r.requests.total)) }
      : {}),
  };
}

// The header form sends one more header than a plain read; the control row sends an unrelated
// header of the same size, to tell that cost (the client's and the HTTP parser's) from pinning's.
const ROWS = {
  'current /v1/elements/Fe': [`${base}/v1/elements/Fe`, {}],
  'current /v1/elements/Fe X-Client-Note: 16 chars': [
    `${base}/v1/elements/Fe`,
    { 'x-client-note': versionA },
  ],
  'pinned /v1/elements/Fe?data_version=A': [`${base}/v1/elements/Fe?data_version=${versionA}`, {}],
  'pinned /v1/elements/Fe RI-Data-Version: A': [`${base}/v1/elements/Fe`, { 'ri-data-version': versionA }],
  'current /v1/elements': [`${base}/v1/elements`, {}],
  'pinned /v1/elements?data_version=A': [`${base}/v1/elements?data_version=${versionA}`, {}],
};
const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
for (const [url, headers] of Object.values(ROWS)) await run(url, headers, warmup);

const runs = [];
for (let i = 0; i < repeat; i++) {
  const rows = {};
  for (const [name, [url, headers]] of Object.entries(ROWS)) rows[name] = await measure(url, headers);
  runs.push(rows);
}
await server.stop();
console.log(JSON.stringify({ versionA, versionB, duration_s: duration, runs }, null, 2));
// Each repeat's ratio, then the median over the repeats (the machine's noise shows in the spread).
const ratio = (rows, name, base) => ({
  rps: rows[name].rps / rows[base].rps,
  cpu: rows[base].cpu_us_per_req / rows[name].cpu_us_per_req,
});
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const CHECKS = [
  ['pinned /v1/elements/Fe?data_version=A', 'current /v1/elements/Fe'],
  ['pinned /v1/elements/Fe RI-Data-Version: A', 'current /v1/elements/Fe'],
  ['pinned /v1/elements/Fe RI-Data-Version: A', 'current /v1/elements/Fe X-Client-Note: 16 chars'],
  ['pinned /v1/elements?data_version=A', 'current /v1/elements'],
];
// On a shared machine a row can lose most of its throughput to other work; the best of the
// repeats of each row (requests/s) is the figure least disturbed by it.
const best = (name) => Math.max(...runs.map((rows) => rows[name].rps));
for (const [name, against] of CHECKS) {
  const each = runs.map((rows) => ratio(rows, name, against));
  const rps = median(each.map((r) => r.rps));
  const cpu = median(each.map((r) => r.cpu));
  const bestRatio = best(name) / best(against);
  console.log(
    `${name} vs ${against}: best of ${runs.length} ${best(name)} vs ${best(against)} rps, ratio ${bestRatio.toFixed(2)} ` +
      `(budget 0.90) ${bestRatio >= 0.9 ? 'ok' : 'MISSED'}; median of the paired ratios ${rps.toFixed(2)} ` +
      `(each: ${each.map((r) => r.rps.toFixed(2)).join(', ')}), CPU per request ratio ${cpu.toFixed(2)}`,
  );
}

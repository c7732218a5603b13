#!/usr/bin/env node
// npm run bench:http: requests/s and latency of the service against a bare @hono/node-server
// route returning the same JSON from memory, measured in the same run (autocannon, 50
// connections, 10 s each, after a short warm-up), plus the p50 of subject search with one connection,
// and whether each point of the budget is met. BENCH_REPEAT=n repeats the measurements n times.
// Uses the 1M-works bench data when present (npm run bench:build), else the bundled sample.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { serve } from '@hono/node-server';
import autocannon from 'autocannon';
import { Hono } from 'hono';
import { startBenchServer } from './serve.mjs';

const root = resolve(import.meta.dirname, '..');
const duration = Number(process.env.BENCH_SECONDS ?? 10);
const benchDir = resolve(process.env.BENCH_DIR ?? join(root, '.bench'));
let dataDir = [join(benchDir, 'data-1000000'), join(benchDir, 'data-100000')].find((d) =>
  existsSync(join(d, 'snapshots/CURRENT')),
);
if (!dataDir) {
  dataDir = mkdtempSync(join(tmpdir(), 'ri-bench-http-'));
  console.error(`no bench data: serving the bundled sample from ${dataDir}`);
}
const server = await startBenchServer(dataDir, { plan: 'personal', portBase: 18600 });
const { key, child } = server;
const service = server.base;

// The bare baseline: the same bodies, from memory, on a plain Hono route in its own server.
const bodies = {};
for (const path of ['/v1/elements/Fe', '/v1/elements'])
  bodies[path] = await (await fetch(service + path)).text();
const bare = new Hono();
bare.get('/v1/elements/Fe', (c) =>
  c.body(bodies['/v1/elements/Fe'], 200, { 'content-type': 'application/json' }),
);
bare.get('/v1/elements', (c) => c.body(bodies['/v1/elements'], 200, { 'content-type': 'application/json' }));
const barePort = Number(new URL(service).port) + 1000;
const bareServer = serve({ fetch: bare.fetch, port: barePort, hostname: '127.0.0.1' });
const baseline = `http://127.0.0.1:${barePort}`;

function run(url, options = {}) {
  return new Promise((ok, fail) =>
    autocannon({ url, connections: 50, duration, ...options }, (err, r) => (err ? fail(err) : ok(r))),
  );
}
const summary = (r) => ({
  rps: Math.round(r.requests.average),
  p50_ms: r.latency.p50,
  p99_ms: r.latency.p99,
  non2xx: r.non2xx,
});
// The service's CPU time (user + system, from /proc on Linux) per answered request: less at the
// mercy of other work on the machine than requests/s.
const statPath = `/proc/${child.pid}/stat`;
const cpuTicks = () => {
  if (!existsSync(statPath)) return null;
  const fields = readFileSync(statPath, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
async function measureService(url, options) {
  const before = cpuTicks();
  const r = await run(url, options);
  const after = cpuTicks();
  const row = summary(r);
  // Clock ticks are 10 ms on Linux (getconf CLK_TCK = 100).
  if (before !== null && after !== null)
    row.cpu_us_per_req = Math.round(((after - before) * 10_000) / Math.max(1, r.requests.total));
  return row;
}

// Warm-up (JIT, the response cache, connection set-up) before anything is measured, so the first
// measured row is not penalised; not reported.
const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
if (warmup > 0) {
  for (const url of [baseline, service])
    for (const path of ['/v1/elements/Fe', '/v1/elements']) await run(url + path, { duration: warmup });
  await run(`${service}/v1/elements/Fe`, { duration: warmup, headers: { authorization: `Bearer ${key}` } });
}

// BENCH_REPEAT=n measures the whole set n times in a row (the machine's noise shows in the spread).
const repeat = Number(process.env.BENCH_REPEAT ?? 1);
const runs = [];
for (let i = 0; i < repeat; i++) {
  const rows = {};
  for (const path of ['/v1/elements/Fe', '/v1/elements']) {
    rows[`bare ${path}`] = summary(await run(baseline + path));
    rows[`service ${path}`] = await measureService(service + path);
  }
  rows['service /v1/elements/Fe (keyed)'] = await measureService(`${service}/v1/elements/Fe`, {
    headers: { authorization: `Bearer ${key}` },
  });
  if (i === 0)
    rows['service search (1 connection)'] = summary(
      await run(`${service}/v1/subjects/search?q=electrocatalyst%20oxygen%20evolution`, {
        connections: 1,
        headers: { authorization: `Bearer ${key}` },
      }),
    );
  runs.push(rows);
}

child.kill('SIGTERM');
bareServer.close();
console.log(JSON.stringify({ dataDir, duration_s: duration, runs }, null, 2));
// The budget: service >= 60% of bare with p99 <= 10 ms for Fe and the list, keyed Fe >= 50% of bare.
for (const [i, rows] of runs.entries()) {
  const check = (name, bareName, min) => {
    const r = rows[name];
    const ratio = r.rps / rows[bareName].rps;
    const ok = ratio >= min && r.p99_ms <= 10;
    const cpu = r.cpu_us_per_req === undefined ? '' : `, service CPU ${r.cpu_us_per_req} us/req`;
    return `${name.replace('service ', '')}: ${r.rps} rps (bare ${rows[bareName].rps}) ratio ${ratio.toFixed(2)}, p99 ${r.p99_ms} ms (bare ${rows[bareName].p99_ms})${cpu} ${ok ? 'ok' : 'MISSED'}`;
  };
  console.log(`run ${i + 1}:`);
  console.log(`  ${check('service /v1/elements/Fe', 'bare /v1/elements/Fe', 0.6)}`);
  console.log(`  ${check('service /v1/elements', 'bare /v1/elements', 0.6)}`);
  console.log(`  ${check('service /v1/elements/Fe (keyed)', 'bare /v1/elements/Fe', 0.5)}`);
}

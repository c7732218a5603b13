#!/usr/bin/env node
// npm run bench:http: requests/s and latency of the service against a bare @hono/node-server
// route in its own process serving the same bytes with the same Content-Encoding, measured in the
// same run (autocannon, 50 connections, 10 s each, after a short warm-up). Every row is run
// without Accept-Encoding and with `Accept-Encoding: gzip, deflate, br` (what browsers, Node's
// fetch and Python's requests send); plus the p50 of subject search with one connection, and
// whether each point of the budget is met. BENCH_REPEAT=n repeats the measurements n times.
// Uses the 1M-works bench data when present (npm run bench:build), else the bundled sample.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { serve } from '@hono/node-server';
import autocannon from 'autocannon';
import { Hono } from 'hono';
import { benchDataDir, startBenchServer } from './serve.mjs';

const PATHS = ['/v1/elements/Fe', '/v1/elements'];
const BROWSER = 'gzip, deflate, br';

// The bare baseline's own process (BENCH_BARE_DIR set): each path's identity and Brotli bytes as
// the service sent them, by Accept-Encoding, with plain header objects (the fastest Hono answer).
if (process.env.BENCH_BARE_DIR) {
  const dir = process.env.BENCH_BARE_DIR;
  const bare = new Hono();
  for (const [i, path] of PATHS.entries()) {
    const identity = readFileSync(join(dir, `${i}.identity`));
    const br = readFileSync(join(dir, `${i}.br`));
    const type = { 'content-type': 'application/json' };
    const encoded = { ...type, 'content-encoding': 'br', vary: 'Accept-Encoding' };
    bare.get(path, (c) =>
      c.req.header('accept-encoding')?.includes('br')
        ? c.body(br, 200, encoded)
        : c.body(identity, 200, type),
    );
  }
  serve({ fetch: bare.fetch, port: Number(process.env.BENCH_BARE_PORT), hostname: '127.0.0.1' }, () =>
    console.log('serving'),
  );
} else await main();

/** The raw bytes and Content-Encoding of an answer, not decoded (fetch would decode them). */
function rawGet(url, headers) {
  return new Promise((ok, fail) =>
    request(url, { headers }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () =>
        ok({ body: Buffer.concat(chunks), encoding: res.headers['content-encoding'] ?? 'identity' }),
      );
    })
      .on('error', fail)
      .end(),
  );
}

async function main() {
  const _root = resolve(import.meta.dirname, '..');
  const duration = Number(process.env.BENCH_SECONDS ?? 10);
  const dataDir = benchDataDir('http');
  const server = await startBenchServer(dataDir, { plan: 'personal', portBase: 18600 });
  const { key, child } = server;
  const service = server.base;

  // The bare baseline gets the very bytes the service answers, in each encoding.
  const bytesDir = mkdtempSync(join(tmpdir(), 'ri-bench-bare-'));
  for (const [i, path] of PATHS.entries()) {
    const identity = await rawGet(service + path, {});
    const br = await rawGet(service + path, { 'accept-encoding': BROWSER });
    if (identity.encoding !== 'identity' || br.encoding !== 'br')
      throw new Error(`${path}: expected identity and br, got ${identity.encoding} and ${br.encoding}`);
    writeFileSync(join(bytesDir, `${i}.identity`), identity.body);
    writeFileSync(join(bytesDir, `${i}.br`), br.body);
  }
  const barePort = Number(new URL(service).port) + 1000;
  const bareChild = spawn(process.execPath, [import.meta.filename], {
    env: { ...process.env, BENCH_BARE_DIR: bytesDir, BENCH_BARE_PORT: String(barePort) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.on('exit', () => bareChild.kill('SIGTERM'));
  await new Promise((ok) => bareChild.stdout.on('data', (d) => String(d).includes('serving') && ok()));
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
  // CPU time (user + system, from /proc on Linux) per answered request: less at the mercy of
  // other work on the machine than requests/s.
  const cpuTicks = (pid) => {
    const statPath = `/proc/${pid}/stat`;
    if (!existsSync(statPath)) return null;
    const fields = readFileSync(statPath, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  async function measure(pid, url, options) {
    const before = cpuTicks(pid);
    const r = await run(url, options);
    const after = cpuTicks(pid);
    const row = summary(r);
    // Clock ticks are 10 ms on Linux (getconf CLK_TCK = 100).
    if (before !== null && after !== null)
      row.cpu_us_per_req = Math.round(((after - before) * 10_000) / Math.max(1, r.requests.total));
    return row;
  }
  const encodings = { identity: {}, br: { 'accept-encoding': BROWSER } };
  const keyed = { authorization: `Bearer ${key}` };

  // Warm-up (JIT, the response cache, connection set-up) before anything is measured, so the
  // first measured row is not penalised; not reported.
  const warmup = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
  if (warmup > 0) {
    for (const url of [baseline, service])
      for (const path of PATHS)
        for (const headers of Object.values(encodings)) await run(url + path, { duration: warmup, headers });
    for (const headers of Object.values(encodings))
      await run(`${service}/v1/elements/Fe`, { duration: warmup, headers: { ...keyed, ...headers } });
  }

  // BENCH_REPEAT=n measures the whole set n times in a row (the machine's noise shows in the spread).
  const repeat = Number(process.env.BENCH_REPEAT ?? 1);
  const runs = [];
  for (let i = 0; i < repeat; i++) {
    const rows = {};
    for (const [name, headers] of Object.entries(encodings)) {
      for (const path of PATHS) {
        rows[`bare ${path} ${name}`] = await measure(bareChild.pid, baseline + path, { headers });
        rows[`service ${path} ${name}`] = await measure(child.pid, service + path, { headers });
      }
      rows[`service /v1/elements/Fe keyed ${name}`] = await measure(child.pid, `${service}/v1/elements/Fe`, {
        headers: { ...keyed, ...headers },
      });
    }
    if (i === 0)
      rows['service search (1 connection)'] = summary(
        await run(`${service}/v1/subjects/search?q=electrocatalyst%20oxygen%20evolution`, {
          connections: 1,
          headers: keyed,
        }),
      );
    runs.push(rows);
  }

  child.kill('SIGTERM');
  bareChild.kill('SIGTERM');
  console.log(JSON.stringify({ dataDir, duration_s: duration, runs }, null, 2));
  // The budget (issue 11), with `Accept-Encoding: gzip, deflate, br`: service >= 60% of bare with
  // p99 <= 10 ms for Fe and the list, keyed Fe >= 50% of bare. Rows without it are reported too.
  for (const [i, rows] of runs.entries()) {
    const check = (name, bareName, min) => {
      const r = rows[name];
      const ratio = r.rps / rows[bareName].rps;
      const ok = ratio >= min && r.p99_ms <= 10;
      const cpu = r.cpu_us_per_req === undefined ? '' : `, CPU ${r.cpu_us_per_req} us/req`;
      const bareCpu =
        rows[bareName].cpu_us_per_req === undefined
          ? ''
          : `, bare CPU ${rows[bareName].cpu_us_per_req} us/req`;
      // The CPU ratio (bare's CPU per request over the service's) is what the rps ratio would be
      // if both had a core of their own: steadier than rps on a shared machine.
      const cpuRatio =
        r.cpu_us_per_req && rows[bareName].cpu_us_per_req
          ? `, CPU ratio ${(rows[bareName].cpu_us_per_req / r.cpu_us_per_req).toFixed(2)}`
          : '';
      return `${name.replace('service ', '')}: ${r.rps} rps (bare ${rows[bareName].rps}) ratio ${ratio.toFixed(2)} (budget ${min}), p99 ${r.p99_ms} ms (bare ${rows[bareName].p99_ms})${cpu}${bareCpu}${cpuRatio} ${ok ? 'ok' : 'MISSED'}`;
    };
    console.log(`run ${i + 1}:`);
    for (const name of Object.keys(encodings)) {
      console.log(`  ${check(`service /v1/elements/Fe ${name}`, `bare /v1/elements/Fe ${name}`, 0.6)}`);
      console.log(`  ${check(`service /v1/elements ${name}`, `bare /v1/elements ${name}`, 0.6)}`);
      console.log(`  ${check(`service /v1/elements/Fe keyed ${name}`, `bare /v1/elements/Fe ${name}`, 0.5)}`);
    }
  }
}

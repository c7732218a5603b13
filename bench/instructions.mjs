#!/usr/bin/env node
// npm run bench:instructions: instructions per cached read, counted by valgrind's callgrind, of the
// service as `npm start` runs it (its Node flags, the request log on) and of the bare route
// (bare-route.mjs) serving the same bytes. The main thread's count repeats to within 1%, where CPU
// time per request swings from one server process to the next, so it shows whether a change to
// the JavaScript of the request path adds or removes work. It is not the budget's measure and can
// mislead: it leaves out the kernel, cache misses and the cost of waking other threads, and under
// valgrind V8 runs differently (the bare route counts more instructions per request than its
// native CPU time allows). A write through libuv's thread pool looked cheap here and was a sixth
// of the native CPU time. bench:http's CPU time stays the budget's measure.
// Each process in turn: WARM requests, the counters zeroed, N requests (10 connections), the
// counters dumped; printed per request: the main thread and all threads. Needs valgrind.
//   BENCH_PATH (default /v1/elements/Fe), BENCH_KEYED=1, BENCH_BR=0 (no Accept-Encoding),
//   N (default 3000), WARM (default 6000), CLI=other/dist/cli/main.js (another build, for an A/B)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { BROWSER, startBare } from './cached-reads.mjs';
import { benchDataDir, startBenchServer } from './serve.mjs';

if (spawnSync('valgrind', ['--version']).status !== 0) throw new Error('bench:instructions needs valgrind');
const path = process.env.BENCH_PATH ?? '/v1/elements/Fe';
const warm = Number(process.env.WARM ?? 6000);
const n = Number(process.env.N ?? 3000);
const cliPath = process.env.CLI ? resolve(process.env.CLI) : undefined;
const dataDir = benchDataDir('instructions');

/** valgrind's callgrind, counting from the start, one output file per thread and dump. */
function callgrind(dir) {
  return [
    'valgrind',
    '--tool=callgrind',
    '--separate-threads=yes',
    `--callgrind-out-file=${join(dir, 'cg.out')}`,
    `--log-file=${join(dir, 'valgrind.log')}`,
  ];
}

function run(url, headers, amount) {
  return new Promise((ok, fail) =>
    autocannon({ url, connections: 10, amount, headers }, (e, r) => (e ? fail(e) : ok(r))),
  );
}

/** Instructions per request (main thread, all threads) of `target` over n requests after warm ones. */
async function count(target, dir) {
  const headers = {
    ...(process.env.BENCH_BR === '0' ? {} : BROWSER),
    ...(process.env.BENCH_KEYED && target.key ? { authorization: `Bearer ${target.key}` } : {}),
  };
  await run(target.base + path, headers, warm);
  const control = (flag) => spawnSync('callgrind_control', [flag, String(target.pid)], { encoding: 'utf8' });
  if (control('-z').status !== 0) throw new Error('callgrind_control -z failed');
  const r = await run(target.base + path, headers, n);
  if (r.non2xx || r.errors) throw new Error(`${target.base}${path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  if (control('-d').status !== 0) throw new Error('callgrind_control -d failed');
  // The dump of the first -d: cg.out.1-01 (the main thread), cg.out.1-02...
  const totals = readdirSync(dir)
    .filter((f) => f.startsWith('cg.out.1-'))
    .sort()
    .map((f) => Number(readFileSync(join(dir, f), 'utf8').match(/^(?:summary|totals): (\d+)/m)?.[1] ?? 0));
  const perRequest = (x) => Math.round(x / r.requests.total);
  return { main: perRequest(totals[0] ?? 0), all: perRequest(totals.reduce((a, b) => a + b, 0)) };
}

// A server started as usual first: the bytes of the bare route, and a key.
const plain = await startBenchServer(dataDir, { plan: 'personal', portBase: 19300, cliPath });
const results = {};
for (const name of ['bare', 'service']) {
  const dir = mkdtempSync(join(tmpdir(), `ri-bench-instructions-${name}-`));
  const wrap = callgrind(dir);
  const target =
    name === 'bare'
      ? await startBare(plain.base, { wrap })
      : await startBenchServer(dataDir, { plan: 'personal', portBase: 19500, cliPath, wrap }).then((s) => ({
          ...s,
          pid: s.child.pid,
        }));
  results[name] = await count(target, dir);
  await target.stop(); // valgrind writes its last file as the process ends
  rmSync(dir, { recursive: true, force: true });
}
await plain.stop();

console.log(
  JSON.stringify({ dataDir, path, keyed: Boolean(process.env.BENCH_KEYED), warm, n, results }, null, 2),
);
const { bare, service } = results;
console.log(
  `${path}${process.env.BENCH_KEYED ? ' keyed' : ''}: instructions per request, service ${service.all} ` +
    `(main thread ${service.main}), bare ${bare.all} (${bare.main}); bare / service ${(bare.all / service.all).toFixed(2)} ` +
    `(main thread ${(bare.main / service.main).toFixed(2)})`,
);

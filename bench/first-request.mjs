#!/usr/bin/env node
// Opening a snapshot and serving the first request: time from starting `ri serve` on an existing
// data directory to the first 200 from /v1/elements (budget: <= 1 s), and the same for the
// in-process part alone (open the snapshot, answer one request).
// Usage: node bench/first-request.mjs [DATA_DIR] (default: the 1M bench data, else the sample).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { START_NODE_ARGS } from './serve.mjs';

const root = resolve(import.meta.dirname, '..');
const candidates = [
  process.argv[2],
  join(root, '.bench/data-1000000'),
  join(root, '.bench/data-100000'),
  join(root, 'data'),
];
const dataDir = candidates.find((d) => d && existsSync(join(d, 'snapshots/CURRENT')));
if (!dataDir)
  throw new Error('no data directory with a snapshot: run npm run bench:build or npm start first');

const { SnapshotManager } = await import(join(root, 'dist/snapshot/snapshot.js'));
const { createApp } = await import(join(root, 'dist/http/app.js'));
const { loadConfig } = await import(join(root, 'dist/config/config.js'));
let t = performance.now();
const manager = new SnapshotManager(join(dataDir, 'snapshots'));
await manager.start();
const { openStateStore } = await import(join(root, 'dist/access/open-state-store.js'));
const state = await openStateStore(undefined, dataDir);
await state.migrate();
const app = createApp({ config: loadConfig({}), snapshots: manager, state });
const res = await app.request('/v1/elements');
const inProcessMs = performance.now() - t;
if (res.status !== 200) throw new Error(`status ${res.status}`);
manager.stop();

const port = 18000 + Math.floor(Math.random() * 1000);
t = performance.now();
// As `npm start` runs it: its Node flags, the request log on (its output to /dev/null).
const child = spawn(
  process.execPath,
  [
    ...START_NODE_ARGS,
    join(root, 'dist/cli/main.js'),
    'serve',
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
  ],
  { env: { ...process.env, DATA_DIR: dataDir }, stdio: 'ignore' },
);
// Asked every 10 ms for up to two minutes (a large snapshot on a busy machine takes seconds).
let processMs = null;
const deadline = t + 120_000;
while (processMs === null && performance.now() < deadline) {
  try {
    const r = await fetch(`http://127.0.0.1:${port}/v1/elements`);
    if (r.status === 200) processMs = performance.now() - t;
    else await r.arrayBuffer();
  } catch {
    // not listening yet
  }
  if (processMs === null) await new Promise((r) => setTimeout(r, 10));
}
child.kill('SIGTERM');
console.log(
  JSON.stringify({
    dataDir,
    in_process_open_and_first_request_ms: Math.round(inProcessMs),
    process_start_to_first_200_ms: Math.round(processMs ?? -1),
  }),
);

#!/usr/bin/env node
// npm run bench:build: ingest + build of synthetic corpora of real-record size, timed per phase,
// with peak RSS of each phase (each runs as its own `ri` process, as a user would run it).
// Generation is not timed. Sizes: BENCH_SIZES=100000,1000000 (default); corpora are cached in .bench/.
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { syntheticCorpus } from './serve.mjs';

const root = resolve(import.meta.dirname, '..');
const cli = join(root, 'dist/cli/main.js');
const benchDir = resolve(process.env.BENCH_DIR ?? join(root, '.bench'));
const sizes = (process.env.BENCH_SIZES ?? '100000,1000000').split(',').map(Number);

function timed(args) {
  const started = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, cli, ...args], { encoding: 'utf8' });
  const seconds = (performance.now() - started) / 1000;
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    throw new Error(`ri ${args.join(' ')} failed`);
  }
  const lines = r.stderr.trim().split('\n');
  const rssMb = Number(lines.at(-1)) / 1024;
  return { seconds, rssMb, log: lines.slice(0, -1) };
}

function sizeOf(dir) {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? sizeOf(p) : statSync(p).size;
  }
  return total;
}

const rows = [];
for (const n of sizes) {
  const corpus = syntheticCorpus(benchDir, n, cli);
  const data = join(benchDir, `data-${n}`);
  rmSync(data, { recursive: true, force: true });
  console.error(`ingest ${n}...`);
  const ingest = timed(['ingest', corpus, '--data-dir', data]);
  console.error(ingest.log.at(-1));
  console.error(`build ${n}...`);
  const build = timed(['build', '--data-dir', data]);
  console.error(build.log.at(-1));
  const snapshots = join(data, 'snapshots');
  const snapshot = readdirSync(snapshots).find((f) => f.endsWith('.sqlite'));
  const row = {
    works: n,
    ingest_s: +ingest.seconds.toFixed(1),
    ingest_works_per_s: Math.round(n / ingest.seconds),
    ingest_peak_rss_mb: Math.round(ingest.rssMb),
    build_s: +build.seconds.toFixed(1),
    build_works_per_s: Math.round(n / build.seconds),
    build_peak_rss_mb: Math.round(build.rssMb),
    total_s: +(ingest.seconds + build.seconds).toFixed(1),
    corpus_gzip_mb: Math.round(sizeOf(join(corpus, 'works')) / 1e6),
    snapshot_mb: Math.round(statSync(join(snapshots, snapshot)).size / 1e6),
  };
  rows.push(row);
  console.log(JSON.stringify(row));
  // For npm run bench:scale, which reuses a built size instead of building it again.
  writeFileSync(join(benchDir, `build-${n}.json`), `${JSON.stringify(row)}\n`);
}
if (rows.length >= 2) {
  const [a, b] = [rows[0], rows.at(-1)];
  console.log(
    `scaling ${a.works} -> ${b.works} (${b.works / a.works}x works): total time ${(b.total_s / a.total_s).toFixed(2)}x`,
  );
}

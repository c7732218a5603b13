#!/usr/bin/env node
// npm run bench:scale: the same measures at several corpus sizes, with the growth per 10x works.
// For each size in BENCH_SIZES (default 1000000,10000000, issue 48's two sizes):
//   - ingest and build, each its own `ri` process, wall time and peak RSS (bench/build.mjs; a size
//     already built in BENCH_DIR is reused with its recorded figures unless BENCH_REBUILD=1);
//   - first request: `ri serve` started to the first 200 of /v1/elements (bench/first-request.mjs);
//   - research: cold questions over HTTP, p50/p99 (bench/research.mjs);
//   - lab: quotes in the core, first calls, p50/p99 (bench/lab.mjs);
//   - mixed load: 50 connections for 30 s, errors, element p99, the replica's RSS (bench/mixed.mjs);
//   - a day's update: `ri update` of 10,000 new and 50,000 changed works on a copy of the data
//     (1M and up; a fiftieth of the corpus below), then `ri build --full` of the same folder, which
//     must publish the same data_version (bench/incremental.mjs, BENCH_ONE_COPY=1).
// BENCH_SKIP=mixed,update leaves those out. The table also goes to bench/results/scale-<date>.md.
// Then one table, and the growth per 10x between consecutive sizes: (b/a)^(1/log10(nb/na)).
// 10M works take about an hour on 2 cores (generation 18 min, ingest 13, build 7, the measures and
// the update the rest) and 35 GB of disk (BENCH_DIR); not part of `npm run bench`.
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const benchDir = resolve(process.env.BENCH_DIR ?? join(root, '.bench'));
const sizes = (process.env.BENCH_SIZES ?? '1000000,10000000').split(',').map(Number);
const skip = new Set((process.env.BENCH_SKIP ?? '').split(','));
const resultsFile = join(root, 'bench/results', `scale-${new Date().toISOString().slice(0, 10)}.md`);

/** Runs a bench script and returns its last JSON document on stdout. */
function runJson(script, args = [], env = {}) {
  const r = spawnSync(process.execPath, [join(root, 'bench', script), ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`${script} ${args.join(' ')} failed (${r.status})`);
  const out = r.stdout.trim();
  // Either one JSON line at the end, or a pretty-printed document followed by text lines.
  const lines = out.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i].startsWith('{')) {
      for (let j = lines.length; j > i; j--) {
        try {
          return JSON.parse(lines.slice(i, j).join('\n'));
        } catch {
          // not yet a whole document
        }
      }
    }
  }
  throw new Error(`${script}: no JSON in its output`);
}

const rows = [];
for (const n of sizes) {
  const data = join(benchDir, `data-${n}`);
  const recorded = join(benchDir, `build-${n}.json`);
  if (process.env.BENCH_REBUILD || !existsSync(join(data, 'snapshots/CURRENT')) || !existsSync(recorded)) {
    console.error(`scale: building ${n} works...`);
    runJson('build.mjs', [], { BENCH_SIZES: String(n) });
  } else console.error(`scale: ${n} works already built (${recorded}); BENCH_REBUILD=1 builds again`);
  const build = JSON.parse(readFileSync(recorded, 'utf8'));
  console.error(`scale: first request on ${n}...`);
  const first = runJson('first-request.mjs', [data]);
  console.error(`scale: research on ${n}...`);
  const research = runJson('research.mjs', [data]);
  console.error(`scale: lab on ${n}...`);
  const lab = runJson('lab.mjs', [data]);
  let mixed = null;
  if (!skip.has('mixed')) {
    console.error(`scale: mixed load on ${n}...`);
    mixed = runJson('mixed.mjs', [data], { MIXED_CONNECTIONS: '50', MIXED_SECONDS: '30' }).mixed[0];
  }
  let update = null;
  if (!skip.has('update')) {
    console.error(`scale: a day's update on ${n}...`);
    const day = n >= 1_000_000 ? '10000,50000' : `${Math.round(n / 1000)},${Math.round(n / 200)}`;
    update = runJson('incremental.mjs', [], {
      BENCH_WORKS: String(n),
      BENCH_BASE: data,
      BENCH_ONE_COPY: '1',
      BENCH_ROUNDS: '1',
      BENCH_DAY: day,
    });
  }
  const firstCalls = Object.entries(lab.rows)
    .filter(([k]) => k.endsWith('(first call)'))
    .flatMap(([, v]) => [v]);
  rows.push({
    works: n,
    ingest_s: build.ingest_s,
    build_s: build.build_s,
    ingest_peak_rss_mb: build.ingest_peak_rss_mb,
    build_peak_rss_mb: build.build_peak_rss_mb,
    snapshot_mb: build.snapshot_mb,
    ingest_works_per_s_per_core: Math.round(build.ingest_works_per_s / 2),
    build_works_per_s: build.build_works_per_s,
    first_200_ms: first.process_start_to_first_200_ms,
    research_http_p50_ms: research.http?.p50_ms,
    research_http_p99_ms: research.http?.p99_ms,
    lab_quote_first_p50_ms: Math.max(...firstCalls.map((v) => v.p50_ms)),
    lab_quote_first_p99_ms: Math.max(...firstCalls.map((v) => v.p99_ms)),
    lab_index_load_ms: lab.lab_index_load_ms,
    mixed50_rps: mixed?.rps,
    mixed50_errors: mixed?.errors,
    mixed50_element_p99_ms: mixed?.element_p99_ms,
    mixed50_replica_rss_max_mb: mixed?.rss_mb_max,
    mixed50_replica_rss_last20_growth_mb: mixed?.rss_mb_last20_growth,
    update_s: update?.median_incremental_update_s,
    update_peak_rss_mb: update?.max_incremental_build_peak_rss_mb,
    update_full_build_s: update?.median_full_build_s,
    update_share_of_full_build: update
      ? +(update.median_incremental_update_s / update.median_full_build_s).toFixed(2)
      : undefined,
  });
  console.log(JSON.stringify(rows.at(-1)));
}

const keys = Object.keys(rows[0]).filter((k) => k !== 'works');
const out = [];
const print = (line) => {
  console.log(line);
  out.push(line);
};
print(`\n| measure | ${rows.map((r) => `${r.works.toLocaleString('en')} works`).join(' | ')} |`);
print(`|---|${rows.map(() => '---|').join('')}`);
for (const k of keys) print(`| ${k} | ${rows.map((r) => r[k] ?? '-').join(' | ')} |`);
for (let i = 1; i < rows.length; i++) {
  const [a, b] = [rows[i - 1], rows[i]];
  const decades = Math.log10(b.works / a.works);
  const growth = keys
    .filter((k) => typeof a[k] === 'number' && typeof b[k] === 'number' && a[k] > 0)
    .map((k) => `${k} ${((b[k] / a[k]) ** (1 / decades)).toFixed(2)}x`);
  print(`\ngrowth per 10x works, ${a.works} -> ${b.works}: ${growth.join(', ')}`);
}
appendFileSync(
  resultsFile,
  `\n## npm run bench:scale, ${new Date().toISOString()}, sizes ${sizes.join(', ')}\n${out.join('\n')}\n\n${rows.map((r) => JSON.stringify(r)).join('\n')}\n`,
);
console.error(`scale: results appended to ${resultsFile}`);

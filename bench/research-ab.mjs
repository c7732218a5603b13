#!/usr/bin/env node
// A/B of the full build and of research between two checkouts with dist/ built (the research
// relevance budget: B's build <= 1.15x A's, research p50 and p99 <= 1.2x, the same data_version
// for the same corpus twice). On one synthetic corpus (`ri generate --seed 1`, kept in .bench/):
//  1. ingest + build from scratch with each CLI, in the order A B B A: wall and CPU seconds and
//     peak RSS of each, the ratios B/A, and whether each side published one data_version twice;
//  2. bench/research.mjs (this checkout's) against each side's snapshot, code and `ri serve`
//     (BENCH_ROOT), in the order A B B A (ROUNDS pairs): core and HTTP p50/p99 and the server's
//     CPU per question, and the ratios B/A of the medians.
//   node bench/research-ab.mjs A_ROOT B_ROOT [WORKS]   (WORKS=1000000; ROUNDS=1; SKIP_BUILD=1: measure
//   research again on the data folders an earlier run built)
// Writes bench/results/research-ab-<date>.json.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { syntheticCorpus } from './serve.mjs';

const root = resolve(import.meta.dirname, '..');
const [aRoot, bRoot] = process.argv.slice(2, 4).map((p) => resolve(p));
if (!bRoot) throw new Error('usage: node bench/research-ab.mjs A_ROOT B_ROOT [WORKS]');
const works = Number(process.argv[4] ?? 1_000_000);
const rounds = Number(process.env.ROUNDS ?? 1);
const benchDir = resolve(process.env.BENCH_DIR ?? join(root, '.bench'));
const corpus = syntheticCorpus(benchDir, works, join(bRoot, 'dist/cli/main.js'));
const sides = { A: aRoot, B: bRoot };
const order = ['A', 'B', 'B', 'A'];

/** `ri <args>` of one side under /usr/bin/time: wall and CPU seconds, peak RSS. */
function timed(side, args) {
  const r = spawnSync(
    '/usr/bin/time',
    ['-f', '%e %U %S %M', process.execPath, join(sides[side], 'dist/cli/main.js'), ...args],
    { encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'info' } },
  );
  if (r.status !== 0) throw new Error(`${side}: ri ${args.join(' ')} failed:\n${r.stderr.slice(-2000)}`);
  const [wall, user, sys, rssKb] = r.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  return { wall_s: wall, cpu_s: +(user + sys).toFixed(1), peak_rss_mb: Math.round(rssKb / 1024) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const dataOf = (side) => join(benchDir, `ab-${side}-${works}`);

// 1. Builds.
const builds = { A: [], B: [] };
for (const side of process.env.SKIP_BUILD === '1' ? [] : order) {
  const data = dataOf(side);
  rmSync(data, { recursive: true, force: true });
  console.error(`${side}: ingest + build ${works} works...`);
  const ingest = timed(side, ['ingest', corpus, '--data-dir', data]);
  const build = timed(side, ['build', '--data-dir', data]);
  const version = readFileSync(join(data, 'snapshots/CURRENT'), 'utf8').trim();
  builds[side].push({ ingest, build, data_version: version });
  console.error(
    `${side}: ingest ${ingest.wall_s} s, build ${build.wall_s} s (CPU ${build.cpu_s} s), ${version}`,
  );
}
const buildRatio = (what, key) =>
  +(median(builds.B.map((b) => b[what][key])) / median(builds.A.map((b) => b[what][key]))).toFixed(2);
const result =
  process.env.SKIP_BUILD === '1'
    ? { works, a: aRoot, b: bRoot }
    : {
        works,
        a: aRoot,
        b: bRoot,
        builds,
        build_ratio_b_over_a: { wall: buildRatio('build', 'wall_s'), cpu: buildRatio('build', 'cpu_s') },
        ingest_ratio_b_over_a: { wall: buildRatio('ingest', 'wall_s'), cpu: buildRatio('ingest', 'cpu_s') },
        same_version_twice: {
          A: new Set(builds.A.map((b) => b.data_version)).size === 1,
          B: new Set(builds.B.map((b) => b.data_version)).size === 1,
        },
      };
if (result.builds)
  console.log(
    JSON.stringify({ build: result.build_ratio_b_over_a, same_version_twice: result.same_version_twice }),
  );

// 2. Research on each side's own snapshot (the last build of each), A B B A per round.
const research = { A: [], B: [] };
for (let r = 0; r < rounds; r++)
  for (const side of order) {
    console.error(`${side}: research...`);
    const run = spawnSync(process.execPath, [join(root, 'bench/research.mjs'), dataOf(side)], {
      encoding: 'utf8',
      env: { ...process.env, BENCH_ROOT: sides[side], BENCH_CLIENTS: 'http' },
    });
    if (run.status !== 0) throw new Error(`${side}: research bench failed:\n${run.stderr.slice(-2000)}`);
    research[side].push(JSON.parse(run.stdout));
  }
const ratio = (get) => +(median(research.B.map(get)) / median(research.A.map(get))).toFixed(2);
result.research = research;
result.research_ratio_b_over_a = {
  http_p50: ratio((x) => x.http.p50_ms),
  http_p99: ratio((x) => x.http.p99_ms),
  core_p50: ratio((x) => x.core.p50_ms),
  core_p99: ratio((x) => x.core.p99_ms),
  core_cpu_p50: ratio((x) => x.core_cpu.p50_ms),
  server_cpu_per_question: ratio((x) => x.http.server_cpu_ms_per_question),
};
console.log(JSON.stringify(result.research_ratio_b_over_a));
const dir = join(root, 'bench/results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `research-ab-${new Date().toISOString().slice(0, 16).replace(/[:T]/g, '-')}.json`);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
console.log(`written ${file}`);

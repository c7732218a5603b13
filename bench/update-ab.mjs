#!/usr/bin/env node
// A/B of `ri update` between two compiled builds of the CLI: each run on a fresh copy of the same
// data folder (already built, with its build cache), adding the same partition, in alternating
// pairs (A B, B A, ...), as an operator runs it (one process). Prints wall and CPU seconds, peak
// RSS and the data_version of each run, then the ratios B/A per pair; both must publish the same
// data_version when a change is meant to keep the bytes.
//   node bench/update-ab.mjs A_CLI B_CLI DATA_DIR PARTITION   (PAIRS=3; e.g. the base folder and
//   the day's partition that bench:incremental leaves in .bench/incremental-1000000/)
// When B writes another snapshot format, B_DATA_DIR names B's own copy of the folder, rebuilt by
// B (`ri build --full`), so each copies paper rows from a snapshot of its own format.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const [aCli, bCli, base, partition] = process.argv.slice(2).map((p) => resolve(p));
if (!partition) throw new Error('usage: node bench/update-ab.mjs A_CLI B_CLI DATA_DIR PARTITION');
const work = resolve('.bench/update-ab');
const bases = { A: base, B: process.env.B_DATA_DIR ? resolve(process.env.B_DATA_DIR) : base };

function run(name, cli) {
  const data = join(work, name);
  rmSync(data, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  cpSync(bases[name], data, { recursive: true });
  spawnSync('sync');
  const started = performance.now();
  const r = spawnSync(
    '/usr/bin/time',
    ['-f', '%U %S %M', process.execPath, cli, 'update', partition, '--data-dir', data],
    { encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  const wall = (performance.now() - started) / 1000;
  rmSync(data, { recursive: true, force: true });
  if (r.status !== 0) throw new Error(`${name}: ri update failed\n${r.stderr}`);
  const [user, sys, rssKb] = r.stderr.trim().split('\n').at(-1).split(' ').map(Number);
  const version = r.stdout.trim().split('\n').at(-1);
  // When the snapshot was published (the CURRENT pointer switched), from the process's start: the
  // wall time less what the build did after its 'published' lap (awaiting the build cache).
  const publishedLap = Number(/build: published \S+ \(([\d.]+) s\)/.exec(r.stderr)?.[1]);
  const buildTotal = Number(/subjects in ([\d.]+) s; data_version/.exec(r.stderr)?.[1]);
  const published = wall - (buildTotal - publishedLap);
  const result = { wall, published, cpu: user + sys, rssMb: Math.round(rssKb / 1024), version };
  console.log(
    `${name} wall ${wall.toFixed(1)} s (published at ${published.toFixed(1)} s), cpu ${result.cpu.toFixed(1)} s, peak ${result.rssMb} MB, ${version}`,
  );
  return result;
}

const pairs = [];
for (let i = 0; i < Number(process.env.PAIRS ?? 3); i++) {
  const [first, second] =
    i % 2
      ? [
          ['B', bCli],
          ['A', aCli],
        ]
      : [
          ['A', aCli],
          ['B', bCli],
        ];
  const got = Object.fromEntries([first, second].map(([name, cli]) => [name, run(name, cli)]));
  pairs.push(got);
}
const ratio = (k) => pairs.map((p) => (p.B[k] / p.A[k]).toFixed(2)).join(' / ');
console.log(`B/A wall ${ratio('wall')}, published ${ratio('published')}, cpu ${ratio('cpu')}`);
const versions = (k) => new Set(pairs.map((p) => p[k].version)).size === 1;
console.log(
  `same data_version in every run: A ${versions('A')}, B ${versions('B')}, A = B ${pairs[0].A.version === pairs[0].B.version}`,
);

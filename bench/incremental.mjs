#!/usr/bin/env node
// npm run bench:incremental: a day's partition added to a large corpus, published by a full
// rebuild (`ri ingest`, then `ri build --full`) and by `ri update` (ingest, tag and the incremental
// build from the build cache, in one process: issue 11's budget), on two copies of the same data folder, alternating which goes first, for BENCH_ROUNDS days.
// Every round checks both publish the same data_version. Reports wall and CPU seconds (the
// machine is shared: CPU time is the steadier figure), peak RSS and the ratios full/incremental.
//   BENCH_WORKS=300000 (corpus size), BENCH_ROUNDS=3, BENCH_DIR=.bench, BENCH_PARTITION (records a day)
//   BENCH_BASE=DIR: start from a copy of a data folder already ingested and built from the
//   corpus of BENCH_WORKS works (e.g. .bench/data-1000000) instead of ingesting it again.
// The partition of each day: 0.25% of the corpus new works (a tenth of them works the corpus
// already cites), 0.05% newer versions of stored works (more citations), 0.01% retracted.
//   BENCH_DAY=NEW,CHANGED: a day of NEW new works and CHANGED newer versions (issue 48's day at
//   10M: 10000,50000), and a fiftieth of CHANGED retracted.
//   BENCH_ONE_COPY=1: for corpora too large to copy three times a day: the day is published by
//   `ri update` on one copy, then `ri build --full` of the same folder must publish the same
//   data_version (it finds it current); the full build's time is its own, on the same corpus.
//   BENCH_DAYS_ONLY=1: writes the days' partitions, prints their paths and stops.
import { spawnSync } from 'node:child_process';
import { cpSync, createReadStream, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip, gzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { syntheticCorpus } from './serve.mjs';

const root = resolve(import.meta.dirname, '..');
// BENCH_CLI: a build of the CLI of its own (e.g. tsc --outDir .bench/frozen/dist), so that
// another \`npm run build\` in the same tree during the run cannot change what is measured.
const cli = resolve(process.env.BENCH_CLI ?? join(root, 'dist/cli/main.js'));
const benchDir = resolve(process.env.BENCH_DIR ?? join(root, '.bench'));
const works = Number(process.env.BENCH_WORKS ?? 300_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const OA = 'https://openalex.org/W';

/** One `ri` process: wall, user+sys CPU seconds, peak RSS (MB), stdout, stderr. */
function ri(args) {
  const started = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, cli, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const wall = (performance.now() - started) / 1000;
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    throw new Error(`ri ${args.join(' ')} failed`);
  }
  const lines = r.stderr.trim().split('\n');
  const [user, sys, rssKb] = lines.at(-1).split(' ').map(Number);
  return { wall, cpu: user + sys, rssMb: rssKb / 1024, stdout: r.stdout.trim(), log: lines.slice(0, -1) };
}

function partFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...partFiles(p));
    else if (e.name.endsWith('.gz')) out.push(p);
  }
  return out.sort();
}

/** The first `count` records of the corpus's part files (parsed). */
async function sampleRecords(corpus, count) {
  const out = [];
  for (const file of partFiles(join(corpus, 'works'))) {
    const lines = createInterface({ input: createReadStream(file).pipe(createGunzip()) });
    for await (const line of lines) {
      if (!line.trim()) continue;
      out.push(JSON.parse(line));
      if (out.length >= count) {
        lines.close();
        return out;
      }
    }
  }
  return out;
}

/** Ids the corpus cites but does not hold (new works the unchanged ones then cite). */
async function citedNotHeld(storePath, count) {
  const db = await DuckDBInstance.create(storePath, { access_mode: 'READ_ONLY' });
  const con = await db.connect();
  const rows = (
    await con.runAndReadAll(
      `SELECT DISTINCT r::DOUBLE FROM (SELECT unnest(refs) AS r FROM works) WHERE r NOT IN (SELECT id FROM works) ORDER BY 1 LIMIT ${count}`,
    )
  ).getColumnsJS()[0];
  con.closeSync();
  db.closeSync();
  return rows;
}

if (!existsSync(join(cli))) throw new Error('run `npm run build` first');
const corpus = syntheticCorpus(benchDir, works, cli);

const home = join(benchDir, `incremental-${works}`);
const base = join(home, 'base');
const oneCopy = process.env.BENCH_ONE_COPY === '1';
if (process.env.BENCH_BASE) {
  rmSync(base, { recursive: true, force: true });
  // One copy: the days run on a copy of BENCH_BASE made below.
  if (!oneCopy) cpSync(resolve(process.env.BENCH_BASE), base, { recursive: true });
} else if (!existsSync(join(base, 'snapshots/CURRENT')) || process.env.BENCH_REBUILD) {
  rmSync(base, { recursive: true, force: true });
  console.error(`ingest and first build of ${works} works (not timed)...`);
  ri(['ingest', corpus, '--data-dir', base]);
  ri(['build', '--data-dir', base]);
}

// Where the days start from: BENCH_BASE itself when it is copied once, below.
const source = oneCopy && process.env.BENCH_BASE ? resolve(process.env.BENCH_BASE) : base;
// A base built by an older release has no record of the snapshot its build cache was made with:
// one build with nothing changed records it (not timed), as any build since does.
if (!existsSync(join(source, 'build-cache/corpus.bin.snapshot'))) ri(['build', '--data-dir', source]);

// The days' partitions, made once from records of the corpus. BENCH_PARTITION=n: n records a day
// (issue 11's budget names a 10,000-work partition), in the same shares as the default 0.31%.
const perDay = Number(process.env.BENCH_PARTITION ?? works * 0.0031);
const day = process.env.BENCH_DAY?.split(',').map(Number);
const added = day ? day[0] : Math.round(perDay * (25 / 31));
const replaced = day ? day[1] : Math.round(perDay * (5 / 31));
const removed = day ? Math.max(1, Math.round(day[1] / 50)) : Math.max(1, Math.round(perDay * (1 / 31)));
const sample = await sampleRecords(corpus, rounds * (added + replaced + removed));
const cited = await citedNotHeld(join(source, 'corpus.duckdb'), rounds * Math.ceil(added / 10));
const partitions = [];
for (let r = 0; r < rounds; r++) {
  const day = `2027-01-${String(r + 1).padStart(2, '0')}`;
  const updated = `${day}T06:00:00.000000`;
  const take = sample.slice(r * (added + replaced + removed), (r + 1) * (added + replaced + removed));
  const records = [];
  take.forEach((rec, i) => {
    if (i < added) {
      const id = i < added / 10 && cited.length > 0 ? cited.pop() : 9_000_000_000 + r * 1_000_000 + i;
      // Most of a day's new works are recent; the latest is published on the day (the cut-off moves).
      const date =
        i % 4 === 0
          ? rec.publication_date
          : `${day.slice(0, 8)}${String(1 + (i % (r + 1))).padStart(2, '0')}`;
      records.push({
        ...rec,
        id: `${OA}${id}`,
        ids: undefined,
        doi: rec.doi ? `${rec.doi}-d${r}` : null,
        publication_date: date,
        publication_year: Number(date.slice(0, 4)),
        updated_date: updated,
      });
    } else if (i < added + replaced) {
      records.push({ ...rec, cited_by_count: (rec.cited_by_count ?? 0) + 3, updated_date: updated });
    } else records.push({ ...rec, is_retracted: true, updated_date: updated });
  });
  const file = join(home, `days/works/updated_date=${day}/part_000.gz`);
  mkdirSync(resolve(file, '..'), { recursive: true });
  // As bytes, record by record: a 10M-works day (60,000 records of 13 KB) is past V8's longest string.
  writeFileSync(file, gzipSync(Buffer.concat(records.map((x) => Buffer.from(`${JSON.stringify(x)}\n`)))));
  partitions.push({ day, file, records: records.length });
}
// BENCH_DAYS_ONLY=1: the days' partitions written (to trace one with bench/rss-trace.mjs), no run.
if (process.env.BENCH_DAYS_ONLY === '1') {
  for (const p of partitions) console.log(p.file);
  process.exit(0);
}

// Each round: two copies of the state before the day; one full, one incremental; alternating.
let state = join(home, 'state');
rmSync(state, { recursive: true, force: true });
cpSync(source, state, { recursive: true });
const rows = [];
for (let r = 0; r < rounds; r++) {
  const { day, file, records } = partitions[r];
  const inc = oneCopy ? state : join(home, 'inc');
  const full = oneCopy ? state : join(home, 'full');
  for (const d of oneCopy ? [] : [inc, full]) {
    rmSync(d, { recursive: true, force: true });
    cpSync(state, d, { recursive: true });
  }
  // One copy: the update first, then the full build of what it ingested (no second ingest).
  const order = oneCopy
    ? ['incremental', 'full']
    : r % 2 === 0
      ? ['incremental', 'full']
      : ['full', 'incremental'];
  const result = {};
  for (const kind of order) {
    const data = kind === 'full' ? full : inc;
    // Incremental: \`ri update\` as an operator runs it (ingest, tag, build in one process); its
    // build's own seconds are read from its log. Full: \`ri ingest\`, then \`ri build --full\`.
    let ingest;
    let build;
    let update;
    if (kind === 'full') {
      ingest = oneCopy ? { wall: 0, cpu: 0 } : ri(['ingest', file, '--data-dir', data]);
      build = ri(['build', '--full', '--data-dir', data]);
      update = ingest.wall + build.wall;
    } else {
      const run = ri(['update', file, '--data-dir', data]);
      const seconds = Number(/ in ([\d.]+) s; data_version/.exec(run.log.join('\n'))?.[1]);
      build = { ...run, wall: seconds };
      ingest = { wall: run.wall - seconds };
      update = run.wall;
    }
    // A build that finds its version current prints it too (`unchanged: V is already current`).
    const version = build.stdout.split('\n').at(-1) || /unchanged: (\w+)/.exec(build.log.join('\n'))?.[1];
    result[kind] = { ingest, build, update, version };
    console.error(
      `${day} ${kind}: update ${update.toFixed(1)} s, of which build ${build.wall.toFixed(1)} s (process cpu ${build.cpu.toFixed(1)} s)`,
    );
  }
  if (result.full.version !== result.incremental.version)
    throw new Error(`${day}: full ${result.full.version} != incremental ${result.incremental.version}`);
  const i = result.incremental;
  const f = result.full;
  rows.push({
    day,
    partition_records: records,
    data_version: f.version,
    first: order[0],
    full_build_s: +f.build.wall.toFixed(2),
    incremental_build_s: +i.build.wall.toFixed(2),
    full_build_cpu_s: +f.build.cpu.toFixed(2),
    incremental_update_cpu_s: +i.build.cpu.toFixed(2),
    full_update_s: +f.update.toFixed(2),
    incremental_update_s: +i.update.toFixed(2),
    build_ratio_wall: +(f.build.wall / i.build.wall).toFixed(2),
    update_ratio_cpu: +((f.ingest.cpu + f.build.cpu) / i.build.cpu).toFixed(2),
    full_build_peak_rss_mb: Math.round(f.build.rssMb),
    incremental_build_peak_rss_mb: Math.round(i.build.rssMb),
    incremental_loaded: i.build.log.some((l) => /\(incremental: \d+ changed/.test(l)),
    incremental_log: i.build.log.filter((l) =>
      /loading in full|loaded|papers:|made in full|written|scored|published|unchanged/.test(l),
    ),
  });
  console.log(JSON.stringify(rows.at(-1)));
  if (!oneCopy) {
    rmSync(state, { recursive: true, force: true });
    rmSync(full, { recursive: true, force: true });
    state = join(home, `state`);
    cpSync(inc, state, { recursive: true });
    rmSync(inc, { recursive: true, force: true });
  }
}
if (oneCopy) rmSync(state, { recursive: true, force: true });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  JSON.stringify({
    works,
    rounds,
    median_full_build_s: median(rows.map((x) => x.full_build_s)),
    median_incremental_build_s: median(rows.map((x) => x.incremental_build_s)),
    median_incremental_update_s: median(rows.map((x) => x.incremental_update_s)),
    median_build_ratio_wall: median(rows.map((x) => x.build_ratio_wall)),
    median_update_ratio_cpu: median(rows.map((x) => x.update_ratio_cpu)),
    max_incremental_build_peak_rss_mb: Math.max(...rows.map((x) => x.incremental_build_peak_rss_mb)),
    max_full_build_peak_rss_mb: Math.max(...rows.map((x) => x.full_build_peak_rss_mb)),
  }),
);

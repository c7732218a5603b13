#!/usr/bin/env node
// npm run bench:pull: `ri pull` from a local OpenAlex stand-in against `ri ingest` of the same
// records from a file. A server process (this script with --serve) loads a synthetic corpus
// (`ri generate`, cached in .bench/), keeps the newest version of each work with the fields a pull
// selects, and serves them as OpenAlex /works pages of 200 (cursor paging); it also writes the
// same records as JSON lines, plain and gzip. Each command runs as its own `ri` process in a fresh
// DATA_DIR, a few runs each, alternating. Budget (issue 12): pull at least 80% of ingest's speed.
// BENCH_PULL_WORKS=100000 (default), BENCH_RUNS=5.
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip, gzipSync } from 'node:zlib';
import { syntheticCorpus } from './serve.mjs';

const root = resolve(import.meta.dirname, '..');
const cli = join(root, 'dist/cli/main.js');
const benchDir = resolve(process.env.BENCH_DIR ?? join(root, '.bench'));
const works = Number(process.env.BENCH_PULL_WORKS ?? 100_000);
const runs = Number(process.env.BENCH_RUNS ?? 5);
const PER_PAGE = 200;

function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]))
    .sort();
}

async function serve(corpus, outDir, select) {
  // The newest version of each work, projected to the selected fields (as the API's select does).
  const latest = new Map();
  for (const file of filesUnder(join(corpus, 'works'))) {
    const lines = createInterface({
      input: createReadStream(file).pipe(createGunzip()),
      crlfDelay: Infinity,
    });
    for await (const line of lines) {
      if (!line) continue;
      const w = JSON.parse(line);
      const held = latest.get(w.id);
      if (held && held.updated_date >= w.updated_date) continue;
      latest.set(w.id, {
        updated_date: w.updated_date,
        json: JSON.stringify(Object.fromEntries(select.map((f) => [f, w[f] ?? null]))),
      });
    }
  }
  const records = [...latest.values()].map((r) => r.json);
  mkdirSync(outDir, { recursive: true });
  const text = `${records.join('\n')}\n`;
  writeFileSync(join(outDir, 'works.jsonl'), text);
  writeFileSync(join(outDir, 'works.jsonl.gz'), gzipSync(text));
  const pages = [];
  for (let i = 0; i * PER_PAGE <= records.length; i++) {
    const results = records.slice(i * PER_PAGE, (i + 1) * PER_PAGE);
    const next = results.length > 0 ? String(i + 1) : null;
    const meta = {
      count: records.length,
      db_response_time_ms: 1,
      page: null,
      per_page: PER_PAGE,
      next_cursor: next,
    };
    pages.push(
      Buffer.from(`{"meta":${JSON.stringify(meta)},"results":[${results.join(',')}],"group_by":[]}`),
    );
  }
  const server = createServer((req, res) => {
    const q = new URL(req.url, 'http://x').searchParams;
    const cursor = q.get('cursor');
    const page = pages[cursor === '*' ? 0 : Number(cursor)];
    if (!page || !q.get('filter')?.startsWith('from_updated_date:')) {
      res.writeHead(400, { 'content-type': 'application/json' });
      return res.end('{"error":"bad request"}');
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': page.length });
    res.end(page);
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`ready http://127.0.0.1:${server.address().port} ${records.length}\n`);
  });
}

function timed(args, env = {}) {
  const started = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', process.execPath, cli, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 1 << 26,
  });
  const seconds = (performance.now() - started) / 1000;
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    throw new Error(`ri ${args.join(' ')} failed`);
  }
  const lines = r.stderr.trim().split('\n');
  const [user, sys] = lines.at(-1).split(' ').map(Number);
  return { seconds, cpu: user + sys, summary: lines.filter((l) => / read, /.test(l)).at(-1) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (process.argv[2] === '--serve') {
  await serve(process.argv[3], process.argv[4], process.argv[5].split(','));
} else {
  const corpus = syntheticCorpus(benchDir, works, cli);
  const { PULL_SELECT } = await import(join(root, 'dist/ingest/openalex-pull.js'));
  const out = join(benchDir, `pull-${works}`);
  console.error('loading the records into the local OpenAlex server (not timed)...');
  const server = spawn(
    process.execPath,
    [import.meta.filename, '--serve', corpus, out, PULL_SELECT.join(',')],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const [url, served] = await new Promise((resolveReady, reject) => {
    let text = '';
    server.stdout.on('data', (d) => {
      text += d;
      const m = /ready (\S+) (\d+)/.exec(text);
      if (m) resolveReady([m[1], Number(m[2])]);
    });
    server.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  try {
    const times = { pull: [], ingest: [], ingestGz: [] };
    const cpu = { pull: [], ingest: [], ingestGz: [] };
    const summaries = {};
    for (let run = 1; run <= runs; run++) {
      const steps = [
        ['pull', ['pull', '--since', '1900-01-01'], { OPENALEX_API_URL: url, OPENALEX_API_KEY: '' }],
        ['ingest', ['ingest', join(out, 'works.jsonl')], {}],
        ['ingestGz', ['ingest', join(out, 'works.jsonl.gz')], {}],
      ];
      if (run % 2 === 0) steps.reverse();
      for (const [name, args, env] of steps) {
        const data = join(benchDir, `pull-data-${name}`);
        rmSync(data, { recursive: true, force: true });
        const t = timed([...args, '--data-dir', data], env);
        times[name].push(t.seconds);
        cpu[name].push(t.cpu);
        summaries[name] = t.summary;
        console.error(`run ${run} ${name}: ${t.seconds.toFixed(2)} s (cpu ${t.cpu.toFixed(2)} s)`);
        rmSync(data, { recursive: true, force: true });
      }
    }
    for (const [name, s] of Object.entries(summaries)) console.error(`${name}: ${s}`);
    const pull = median(times.pull);
    const ingest = median(times.ingest);
    const ingestGz = median(times.ingestGz);
    const row = {
      works: served,
      runs,
      pull_s: +pull.toFixed(2),
      pull_works_per_s: Math.round(served / pull),
      ingest_jsonl_s: +ingest.toFixed(2),
      ingest_jsonl_gz_s: +ingestGz.toFixed(2),
      ratio_vs_jsonl: +(ingest / pull).toFixed(2),
      ratio_vs_jsonl_gz: +(ingestGz / pull).toFixed(2),
      // CPU seconds (user + system) of the ri process: steadier than wall time on a busy machine.
      pull_cpu_s: +median(cpu.pull).toFixed(2),
      ingest_jsonl_cpu_s: +median(cpu.ingest).toFixed(2),
      ingest_jsonl_gz_cpu_s: +median(cpu.ingestGz).toFixed(2),
    };
    console.log(JSON.stringify(row));
    const ratio = Math.min(row.ratio_vs_jsonl, row.ratio_vs_jsonl_gz);
    const spread = (xs) => `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`;
    console.log(
      `pull speed / ingest speed (median of ${runs}): ${ratio.toFixed(2)} (budget >= 0.80) ${ratio >= 0.8 ? 'ok' : 'OVER BUDGET'}`,
    );
    // On a busy machine wall time says more about the neighbours than about the pull: the ratio of
    // CPU seconds (ingest's over pull's) is the steadier figure, with each run's ratio for spread.
    const perRun = times.pull.map((_, i) => cpu.ingest[i] / cpu.pull[i]);
    console.log(
      `by CPU time: ${(row.ingest_jsonl_cpu_s / row.pull_cpu_s).toFixed(2)} (runs ${spread(perRun)}); wall per run ${spread(
        times.pull.map((t, i) => times.ingest[i] / t),
      )}; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    server.kill();
  }
}

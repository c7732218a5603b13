#!/usr/bin/env node
// npm run bench:lab: the lab on a snapshot of 1,000,000 synthetic works (npm run bench:build;
// BENCH_DIR/lab-1000000 or data-1000000 when it holds a schema-2 snapshot). Times the service
// core in process: the one-time load of the lab index, then quotes (two-term queries, a query
// matching > 100,000 papers, OR groups, wildcards, exclusions, years) and runs (papers_100),
// each query once cold and then repeated, and prints p50/p95/p99/max per group.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const { Snapshot } = await import(join(root, 'dist/snapshot/snapshot.js'));
const { snapshotFile } = await import(join(root, 'dist/snapshot/folder.js'));
const { labQuote, checkQuote, labRun } = await import(join(root, 'dist/core/lab.js'));
const { labIndex } = await import(join(root, 'dist/lab/lab-index.js'));

const benchDir = resolve(process.env.BENCH_DIR ?? join(root, '.bench'));
const dir = [
  process.argv[2] && join(process.argv[2], 'snapshots'),
  join(benchDir, 'lab-1000000/snapshots'),
  join(benchDir, 'data-1000000/snapshots'),
].find((d) => d && existsSync(join(d, 'CURRENT')));
if (!dir) throw new Error(`no 1M snapshot under ${benchDir}: run npm run bench:build`);
const version = readFileSync(join(dir, 'CURRENT'), 'utf8').trim();
const snapshot = new Snapshot(version, snapshotFile(dir, version));
const viewer = { hriAvailable: true, publicUrl: 'http://localhost:8080' };
const settings = { secret: 'bench-secret-0123456789', ttlSeconds: 900, now: () => new Date() };

const started = performance.now();
const index = labIndex(snapshot);
const loadMs = performance.now() - started;

const topics = snapshot.db
  .prepare("SELECT name FROM subjects WHERE type = 'topic' ORDER BY paper_count DESC LIMIT 40")
  .pluck()
  .all();
const elements = ['Fe', 'Ni', 'Co', 'Cu', 'Li', 'Pt', 'Ti', 'N', 'H', 'P', 'Zn', 'Mn', 'Ag', 'Au', 'Si', 'S'];
const groups = {
  'two terms (element element)': elements
    .slice(0, 12)
    .map((e, i) => `${e} ${elements[(i + 3) % elements.length]}`),
  'two terms (element topic)': topics.slice(0, 12).map((t, i) => `${elements[i % elements.length]} "${t}"`),
  '> 100,000 matches': ['O', 'C', 'O year:2000..', '(O OR C)', 'O -Fe', 'C year:1990..'],
  'OR, NOT, year, wildcard': [
    '(Ni OR Co OR Fe) O -Pt year:2020..',
    'Li -Co year:2015..2024',
    'catal* O',
    'electro* (Ni OR Fe)',
    'nano* Ag year:2022',
    '"Catalytic Processes in Materials Science" -O',
  ],
};

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const summary = (xs) => ({
  n: xs.length,
  p50_ms: +pct(xs, 50).toFixed(2),
  p95_ms: +pct(xs, 95).toFixed(2),
  p99_ms: +pct(xs, 99).toFixed(2),
  max_ms: +Math.max(...xs).toFixed(2),
});
const time = (fn) => {
  const t = performance.now();
  const r = fn();
  return [performance.now() - t, r];
};

const rows = {};
const runTimes = [];
const matches = {};
for (const [name, queries] of Object.entries(groups)) {
  const cold = [];
  const warm = [];
  for (const q of queries) {
    const [ms, quote] = time(() => labQuote(snapshot, q, viewer, settings));
    cold.push(ms);
    matches[q] = quote.matches;
    for (let i = 0; i < 5; i++) warm.push(time(() => labQuote(snapshot, q, viewer, settings))[0]);
    if (quote.deliverables.papers_100) {
      const checked = checkQuote(snapshot, quote, 'papers_100', settings);
      for (let i = 0; i < 3; i++)
        runTimes.push(time(() => labRun(snapshot, checked, 'papers_100', viewer))[0]);
    }
  }
  rows[`quote: ${name} (first call)`] = summary(cold);
  rows[`quote: ${name} (repeated)`] = summary(warm);
}
rows['run papers_100'] = summary(runTimes);
console.log(
  JSON.stringify(
    { snapshot: version, papers: index.papers, lab_index_load_ms: +loadMs.toFixed(0), rows, matches },
    null,
    2,
  ),
);
for (const [k, v] of Object.entries(rows))
  console.log(`${k.padEnd(52)} p50 ${v.p50_ms} ms  p99 ${v.p99_ms} ms  max ${v.max_ms} ms`);
snapshot.retire();

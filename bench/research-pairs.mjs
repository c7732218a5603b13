#!/usr/bin/env node
// Research in process, A/B paired question by question: both checkouts' core research() loaded in
// one process, each on its own snapshot, every question asked 6 times alternating which side goes
// first; per question the minimum of each side and the ratio B/A, then their geometric mean. The
// pairing and the minimum keep the machine's other load out of the ratio, which whole runs one
// after the other (bench/research-ab.mjs) do not on a busy 2-core machine.
//   node bench/research-pairs.mjs A_ROOT A_DATA B_ROOT B_DATA [question ...]
// (e.g. the checkouts and the data folders bench/research-ab.mjs leaves in .bench/ab-*-1000000)
import { join, resolve } from 'node:path';
import { SYNTHETIC_QUESTIONS } from './research-questions.mjs';

const [aRoot, aData, bRoot, bData, ...asked] = process.argv.slice(2);
if (!bData)
  throw new Error('usage: node bench/research-pairs.mjs A_ROOT A_DATA B_ROOT B_DATA [question ...]');
const viewer = { hriAvailable: true, publicUrl: 'http://localhost' };
const sides = {};
for (const [name, root, dataDir] of [
  ['A', aRoot, aData],
  ['B', bRoot, bData],
]) {
  const { SnapshotManager } = await import(join(resolve(root), 'dist/snapshot/snapshot.js'));
  const { research, LENSES } = await import(join(resolve(root), 'dist/core/research.js'));
  const manager = new SnapshotManager(join(resolve(dataDir), 'snapshots'));
  await manager.start();
  const snapshot = manager.acquire();
  const ask = (q) => research(snapshot, { q, pageSize: 10, lenses: [...LENSES], page: 1 }, viewer);
  // As a running server: the first question starts reading the titles' statistics; wait for them.
  ask('catalysis');
  await snapshot.reader.titleRankingReady?.();
  sides[name] = ask;
}
// Background threads (verification, statistics) done before the first timed question.
await new Promise((r) => setTimeout(r, 3000));
// The questions of bench:research (the synthetic titles' words), 20 of them, unless given.
const QUESTIONS = asked.length ? asked : SYNTHETIC_QUESTIONS.slice(0, 20);
const ratios = [];
const firstRatios = [];
const rows = [];
for (const q of QUESTIONS) {
  const t = { A: [], B: [] };
  for (let i = 0; i < 6; i++)
    for (const side of i % 2 ? ['A', 'B'] : ['B', 'A']) {
      const started = performance.now();
      try {
        sides[side](q);
      } catch {
        // a question nothing matches is timed to its refusal, on both sides
      }
      t[side].push(performance.now() - started);
    }
  const a = Math.min(...t.A);
  const b = Math.min(...t.B);
  ratios.push(b / a);
  // The first ask of each side: a question new to it (what bench:research measures).
  firstRatios.push(t.B[0] / t.A[0]);
  rows.push({
    question: q,
    a_ms: +a.toFixed(2),
    b_ms: +b.toFixed(2),
    b_over_a: +(b / a).toFixed(2),
    a_first_ms: +t.A[0].toFixed(2),
    b_first_ms: +t.B[0].toFixed(2),
    first_b_over_a: +(t.B[0] / t.A[0]).toFixed(2),
  });
}
console.table(rows);
const sorted = [...ratios].sort((x, y) => x - y);
const geomean = (xs) => Math.exp(xs.reduce((s, r) => s + Math.log(r), 0) / xs.length);
const geometric = geomean(ratios);
const slowest = rows.reduce((m, r) => (r.a_ms > m.a_ms ? r : m));
console.log(
  `B/A per question: geometric mean ${geometric.toFixed(2)}, median ${sorted[Math.floor(sorted.length / 2)].toFixed(2)}, max ${sorted.at(-1).toFixed(2)}; on A's slowest question (${slowest.question}) ${slowest.b_over_a}`,
);
console.log(`B/A on each side's first ask of a question: geometric mean ${geomean(firstRatios).toFixed(2)}`);
process.exit(0);

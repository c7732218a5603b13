#!/usr/bin/env node
// Where a research server's CPU goes, thread by thread, A against B: each side's `ri serve` on its
// own data (e.g. the folders bench/research-ab.mjs leaves in .bench/ab-*-1000000), one question
// and an idle wait (the titles' statistics read), WARM more unlisted questions, then the listed
// questions each asked once. From /proc/<pid>/task: the main thread (HTTP), the busiest other
// thread (the research worker) and the rest (V8's compiler and GC helpers, libuv's pool). Sides
// alternate for ROUNDS rounds; the medians are printed.
//   node bench/research-threads.mjs A_ROOT A_DATA B_ROOT B_DATA   (WARM=3, ROUNDS=2)
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { median } from './cached-reads.mjs';
import { QUESTIONS, SYNTHETIC_QUESTIONS } from './research-questions.mjs';
import { cpuMs, startBenchServer, untilIdle } from './serve.mjs';

const [aRoot, aData, bRoot, bData] = process.argv.slice(2).map((p) => resolve(p));
if (!bData) throw new Error('usage: node bench/research-threads.mjs A_ROOT A_DATA B_ROOT B_DATA');
const warm = Number(process.env.WARM ?? 3);
const rounds = Number(process.env.ROUNDS ?? 2);
// Unlisted questions whose words the listed ones do not use (so no listed word is warmed).
const WARM_UP = [
  'tungsten carbide',
  'gallium nitride transistors',
  'chitosan hydrogels',
  'ruthenium complexes',
  'antimony selenide',
  'vanadium redox flow',
  'palladium membranes',
  'boron nitride nanosheets',
  'silver nanowires',
  'tin perovskites',
  'lanthanum nickelate',
  'cadmium sulfide quantum dots',
  'zirconium metal organic frameworks',
  'germanium anodes',
  'molybdenum carbide',
  'rhodium catalysts',
];
const LISTED = [...QUESTIONS, ...SYNTHETIC_QUESTIONS].slice(0, 40);

/** CPU ms of each thread of a process so far, by thread id (a thread that ended is left out). */
function threads(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const ms = cpuMs(pid, tid);
    if (ms !== null) out.set(Number(tid), ms);
  }
  return out;
}

async function measure(root, data) {
  const server = await startBenchServer(data, { plan: 'personal', cliPath: join(root, 'dist/cli/main.js') });
  const headers = { authorization: `Bearer ${server.key}`, 'accept-encoding': 'gzip, deflate, br' };
  const ask = async (q) => {
    const res = await fetch(`${server.base}/v1/research?q=${encodeURIComponent(q)}`, { headers });
    await res.arrayBuffer();
  };
  try {
    await ask('catalysis');
    await untilIdle(server);
    for (const q of WARM_UP.slice(0, warm)) await ask(q);
    await untilIdle(server);
    const before = threads(server.child.pid);
    for (const q of LISTED) await ask(q);
    const after = threads(server.child.pid);
    const spent = [...after].map(([tid, ms]) => [tid, ms - (before.get(tid) ?? 0)]);
    const main = spent.find(([tid]) => tid === server.child.pid)?.[1] ?? 0;
    const others = spent.filter(([tid]) => tid !== server.child.pid).sort((x, y) => y[1] - x[1]);
    const worker = others[0]?.[1] ?? 0;
    const rest = others.slice(1).reduce((sum, [, ms]) => sum + ms, 0);
    return { main, worker, rest, total: main + worker + rest };
  } finally {
    await server.stop();
  }
}

const got = { A: [], B: [] };
for (let r = 0; r < rounds; r++)
  for (const side of r % 2 ? ['B', 'A'] : ['A', 'B'])
    got[side].push(await measure(side === 'A' ? aRoot : bRoot, side === 'A' ? aData : bData));
const per = (side, key) => median(got[side].map((g) => g[key]));
console.log(`CPU ms over ${LISTED.length} cold questions (${warm} warm-up questions), median of ${rounds}:`);
for (const key of ['main', 'worker', 'rest', 'total'])
  console.log(
    `  ${key.padEnd(6)} A ${per('A', key)}  B ${per('B', key)}  B/A ${(per('B', key) / Math.max(1, per('A', key))).toFixed(2)}`,
  );

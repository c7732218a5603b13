#!/usr/bin/env node
// npm run bench:mcp (third part): research over MCP against REST when neither has seen the
// question, each in a fresh server of its own (the same snapshot; no answer cache, no warm data the
// other way left), questions asked one at a time. Pairs alternate which way starts. Budget (issue
// 31): MCP within 10% of REST. Reported, never asserted.
import { QUESTIONS as ALL_QUESTIONS } from './research-questions.mjs';
import { benchDataDir, cpuMsPerRequest, startBenchServer } from './serve.mjs';

const QUESTIONS = ALL_QUESTIONS.slice(0, 20);
const SIZES = [3, 4, 5, 6, 7, 8, 9, 10];
const dataDir = process.env.BENCH_DATA ?? benchDataDir('mcp');

/**
 * Every question at every page size, through one way, in a fresh server: ms per call, and the
 * server's CPU ms per call (its start not counted).
 */
async function run(way) {
  const server = await startBenchServer(dataDir, { plan: 'professional', portBase: 19900 });
  const auth = { authorization: `Bearer ${server.key}` };
  let id = 0;
  try {
    const cpu = server.cpuMs();
    const t0 = performance.now();
    for (const size of SIZES)
      for (const q of QUESTIONS) {
        const res =
          way === 'mcp'
            ? await fetch(`${server.base}/mcp`, {
                method: 'POST',
                headers: {
                  ...auth,
                  'content-type': 'application/json',
                  accept: 'application/json, text/event-stream',
                },
                body: JSON.stringify({
                  jsonrpc: '2.0',
                  id: ++id,
                  method: 'tools/call',
                  params: { name: 'research', arguments: { q, page_size: size } },
                }),
              })
            : await fetch(`${server.base}/v1/research?q=${encodeURIComponent(q)}&page_size=${size}`, {
                headers: auth,
              });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${way}: status ${res.status}`);
      }
    const calls = SIZES.length * QUESTIONS.length;
    return { ms: (performance.now() - t0) / calls, cpu: cpuMsPerRequest(cpu, server.cpuMs(), calls) };
  } finally {
    await server.stop();
  }
}

const pairs = Number(process.env.BENCH_PAIRS ?? 3);
const ratios = [];
for (let i = 0; i < pairs; i++) {
  const order = i % 2 === 0 ? ['rest', 'mcp'] : ['mcp', 'rest'];
  const got = {};
  for (const way of order) got[way] = await run(way);
  const { rest, mcp } = got;
  ratios.push(mcp.ms / rest.ms);
  console.log(
    `pair ${i + 1}: rest ${rest.ms.toFixed(2)} ms (server CPU ${rest.cpu} ms), mcp ${mcp.ms.toFixed(2)} ms (server CPU ${mcp.cpu} ms) per cold question; MCP/REST ${(mcp.ms / rest.ms).toFixed(2)}, server CPU ${(mcp.cpu / rest.cpu).toFixed(2)}`,
  );
}
const sorted = [...ratios].sort((a, b) => a - b);
const mid = Math.floor(sorted.length / 2);
const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
console.log(
  `research cold in fresh servers, MCP/REST median of ${pairs} pairs: ${median.toFixed(2)} (budget <= 1.10: ${median <= 1.1 ? 'met' : 'MISSED'})`,
);

#!/usr/bin/env node
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// npm run bench:mcp (second part): what the MCP server costs a model's context, in o200k tokens
// (gpt-tokenizer), measured on what a host receives through the official SDK client: the tool list,
// and tool results. A host gives the model a result's content (its text block: TOON); a program
// reads structuredContent (JSON). Budgets (issue 31), on what the model reads: tools/list <= 3,500;
// get_element_ri <= 250; get_element_papers with 20 papers <= 3,000; research with page_size 5
// <= 2,500. Histories: a year of one element's daily history <= 8,000; no tool result
// over 10,000 for any argument, measured as the largest result of each tool over the arguments
// that make results large (every element at every resolution, the largest batch, the paper tools
// at limit 100, research at page_size 10, a lab run of papers_100; a history, paper list or lab run
// over its size keeps what fits, and the table says how much). Reported, never asserted (a
// benchmark, not a test). Measured on the bundled sample of real works (BENCH_DATA=DIR: another
// data folder): the synthetic bench corpora's made-up titles and venues split into more tokens
// than real ones and say nothing of what a model reads.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { startBenchServer } from './serve.mjs';

// An empty folder: `ri serve` builds the bundled sample in it.
const dataDir = process.env.BENCH_DATA ?? mkdtempSync(join(tmpdir(), 'ri-bench-tokens-'));
const server = await startBenchServer(dataDir, { plan: 'professional', portBase: 19500 });
const client = new Client({ name: 'bench-tokens', version: '1' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`${server.base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${server.key}` } },
  }),
);
try {
  const tokens = (value) => countTokens(typeof value === 'string' ? value : JSON.stringify(value));
  const { tools } = await client.listTools();
  const rows = [['tools/list', tools, 3_500]];
  // A server that takes x402 says each priced tool's price in its description too.
  const paying = await startBenchServer(dataDir, {
    plan: 'free',
    portBase: 19700,
    env: { X402_NETWORKS: 'base', X402_PAY_TO_EVM: `0x${'1'.repeat(40)}` },
  });
  const payClient = new Client({ name: 'bench-tokens', version: '1' });
  try {
    await payClient.connect(new StreamableHTTPClientTransport(new URL(`${paying.base}/mcp`)));
    rows.push(['tools/list (x402 on)', (await payClient.listTools()).tools, 3_500]);
  } finally {
    await payClient.close();
    await paying.stop();
  }
  for (const [name, args, budget] of [
    ['get_element_ri', { symbol: 'Fe' }, 250],
    ['get_element_papers', { symbol: 'Fe', limit: 20 }, 3_000],
    ['research', { q: 'oxygen evolution nickel iron', page_size: 5 }, 2_500],
  ]) {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
    rows.push([`${name} ${JSON.stringify(args)}`, result, budget]);
  }
  // A year of one element's daily history: the 365 days to the data's cut-off.
  const lastDay = (
    await client.callTool({
      name: 'get_element_history',
      arguments: { symbol: 'Fe', resolution: 'daily', last: 1 },
    })
  ).structuredContent.series[0].period;
  const yearFrom = new Date(Date.parse(`${lastDay}T00:00:00Z`) - 364 * 86_400_000).toISOString().slice(0, 10);
  for (const [name, args, budget] of [
    ['get_element_history', { symbol: 'Fe', resolution: 'daily', from: yearFrom, to: lastDay }, 8_000],
    ['get_element_history', { symbol: 'Fe', resolution: 'daily' }, 10_000],
    ['get_element_histories', { symbols: 'Fe,Ni,Co', resolution: 'daily' }, 10_000],
  ]) {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
    rows.push([`${name} ${JSON.stringify(args)}${keptText(result.structuredContent)}`, result, budget]);
  }
  for (const [label, value, budget] of rows) {
    const list = label.startsWith('tools/list');
    // What a model reads: the whole listing; of a result, its text block.
    const n = list ? tokens(value) : tokens(value.content?.[0]?.text ?? '');
    const parts = list
      ? `output schemas ${tokens(value.map((t) => t.outputSchema ?? {}))}, input schemas ${tokens(value.map((t) => t.inputSchema))}, descriptions ${tokens(value.map((t) => t.description ?? ''))}`
      : `text; structuredContent ${tokens(value.structuredContent ?? {})}, the whole result ${tokens(value)}, notes ${tokens(value.structuredContent?.notes ?? {})}`;
    console.log(`${label}: ${n} tokens (${parts}); budget <= ${budget}: ${n <= budget ? 'met' : 'MISSED'}`);
  }
  console.log(`instructions: ${tokens(client.getInstructions() ?? '')} tokens (sent once per session)`);
  await largestResults(client, tokens);
} finally {
  await client.close();
  await server.stop();
}

/** How much of a history or a paper list a result kept, when notes.left_out says it left some out. */
function keptText(answer) {
  if (!answer?.notes?.left_out) return '';
  if (answer.papers) return ` (held to its size: the first ${answer.papers.length} papers kept)`;
  const series = answer.series ? [answer.series] : answer.histories.map((h) => h.series);
  // The longest series kept: a batch's first element may have no period at all.
  const kept = Math.max(...series.map((s) => s.length));
  return ` (held to its size: the latest ${kept} periods of each series kept)`;
}

/**
 * The largest result of each tool over the arguments that make results large, against the budget
 * of 10,000 tokens a result: every element's history at every resolution, the largest batch
 * (20 elements) at every resolution, the subject histories of a few searches, the paper tools at
 * limit 100, research at page_size 10 with every lens, a lab run of papers_100, and the other
 * tools' answers.
 */
async function largestResults(client, tokens) {
  // An error is a result too (a subject with no element links answers unknown_subject): measured alike.
  const largest = new Map();
  const measure = async (name, args) => {
    const result = await client.callTool({ name, arguments: args });
    const n = tokens(result.content?.[0]?.text ?? '');
    if (n > (largest.get(name)?.n ?? -1))
      largest.set(name, {
        n,
        args,
        json: tokens(result.structuredContent ?? {}),
        kept: keptText(result.structuredContent),
      });
    return result;
  };
  const resolutions = ['yearly', 'monthly', 'daily'];
  const { elements } = (await measure('list_elements', {})).structuredContent;
  const symbols = elements.map((e) => e.symbol);
  for (const symbol of symbols) {
    await measure('get_element_ri', { symbol });
    for (const resolution of resolutions) await measure('get_element_history', { symbol, resolution });
  }
  for (let i = 0; i < symbols.length; i += 20)
    for (const resolution of resolutions)
      await measure('get_element_histories', { symbols: symbols.slice(i, i + 20).join(','), resolution });
  const topics = new Set();
  for (const q of [
    'oxygen evolution',
    'battery',
    'catalysis',
    'perovskite solar cells',
    'corrosion',
    'iron',
  ]) {
    const { results } = (await measure('search_subjects', { q })).structuredContent;
    for (const r of results)
      topics.add(JSON.stringify({ subject_type: r.subject_type, subject_id: r.subject_id }));
  }
  for (const subject of [...topics].map((t) => JSON.parse(t))) {
    await measure('get_subject_ri', subject);
    await measure('get_subject_elements', subject);
    await measure('get_subject_papers', { ...subject, limit: 100 });
    for (const resolution of ['yearly', 'monthly'])
      await measure('get_subject_history', { ...subject, resolution });
  }
  for (const symbol of ['Fe', 'O', 'C', 'Ni']) await measure('get_element_papers', { symbol, limit: 100 });
  for (const q of [
    'oxygen evolution nickel iron',
    'lithium battery cathode',
    'perovskite solar cell stability',
  ])
    await measure('research', { q, page_size: 10 });
  for (const q of ['Fe', 'Ni Fe', '(Ni OR Co) Fe year:2020..']) {
    const quote = (await measure('lab_quote', { q })).structuredContent;
    if (!quote) continue;
    const depth = quote.deliverables.papers_100 ? 'papers_100' : 'papers_20';
    await measure('lab_run', { quote_id: quote.quote_id, depth });
  }
  await measure('list_versions', {});
  console.log('The largest result of each tool (budget <= 10,000 tokens each, on what the model reads):');
  for (const [name, { n, args, json, kept }] of [...largest].sort((a, b) => b[1].n - a[1].n))
    console.log(
      `  ${name} ${JSON.stringify(args)}${kept}: ${n} tokens (structuredContent ${json}); ${n <= 10_000 ? 'met' : 'MISSED'}`,
    );
}

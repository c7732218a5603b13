#!/usr/bin/env node
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// npm run bench:mcp (second part): what the MCP server costs a model's context, in o200k tokens
// (gpt-tokenizer), measured on what a host receives through the official SDK client: the tool list,
// and tool results. A host gives the model a result's content (its text block: TOON); a program
// reads structuredContent (JSON). Budgets (issue 31), on what the model reads: tools/list <= 3,500;
// get_element_ri <= 250; get_element_papers with 20 papers <= 3,000; research with page_size 5
// <= 2,500. Reported, never asserted (a benchmark, not a test). Measured on the bundled sample of
// real works (BENCH_DATA=DIR: another data folder): the synthetic bench corpora's made-up titles
// and venues split into more tokens than real ones and say nothing of what a model reads.
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
} finally {
  await client.close();
  await server.stop();
}

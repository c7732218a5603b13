import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../../helpers/app.js';
import { servedSample } from '../../helpers/x402.js';

/**
 * A list of results that comes back empty says why in notes.empty, on REST and in MCP's answers
 * (the same core): each empty list is named there ("papers is empty: ..."), and a list that is
 * not empty is not. Lists that report problems (ignored, unmatched_terms, not_offered) are empty
 * when there is none.
 */
// biome-ignore lint/suspicious/noExplicitAny: answers are walked generically
type Json = Record<string, any>;
let served: Awaited<ReturnType<typeof servedSample>>;
let mcp: Client;

beforeAll(async () => {
  served = await servedSample();
  mcp = new Client({ name: 'ri-test', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${served.server.base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${served.ctx.keys.professional}` } },
    }),
  );
  await mcp.listTools();
}, 60_000);
afterAll(async () => {
  await mcp?.close();
  await served?.close();
});

// Empty when there is nothing to report; broader is offered for a narrow quote only, and says
// why when a narrow one has none (answers-without-gaps.test.ts).
const PROBLEM_LISTS = new Set(['ignored', 'unmatched_terms', 'not_offered', 'broader']);

/** The result lists of an answer, by the name notes.empty gives them, and whether each is empty. */
function resultLists(answer: Json): { name: string; empty: boolean }[] {
  const out: { name: string; empty: boolean }[] = [];
  for (const [key, value] of Object.entries(answer)) {
    if (Array.isArray(value) && !PROBLEM_LISTS.has(key)) out.push({ name: key, empty: value.length === 0 });
  }
  for (const [lens, list] of Object.entries((answer.lists ?? {}) as Record<string, unknown[]>))
    out.push({ name: lens, empty: list.length === 0 });
  for (const h of (answer.histories ?? []) as { symbol: string; series: unknown[] }[])
    out.push({ name: `series (${h.symbol})`, empty: h.series.length === 0 });
  return out;
}

/** Whether notes.empty says why the list is empty. */
function explained(empty: string, name: string): boolean {
  const batch = /^series \((\w+)\)$/.exec(name);
  if (batch) return new RegExp(`series is empty for [^:]*\\b${batch[1]}\\b`).test(empty);
  return new RegExp(`\\b${name}\\b[^.:]* (is|are) empty:`).test(empty);
}

const CASES: [string, string, Json][] = [
  ['/v1/elements/Og/papers', 'get_element_papers', { symbol: 'Og' }],
  ['/v1/elements/Og/history', 'get_element_history', { symbol: 'Og' }],
  ['/v1/elements/history?symbols=Fe,Og,Ts', 'get_element_histories', { symbols: 'Fe,Og,Ts' }],
  ['/v1/elements/Fe/history', 'get_element_history', { symbol: 'Fe' }],
  ['/v1/subjects/search?q=zzqxv%20flibbertigibbet', 'search_subjects', { q: 'zzqxv flibbertigibbet' }],
  ['/v1/subjects/search?q=oxygen%20evolution', 'search_subjects', { q: 'oxygen evolution' }],
  ['/v1/research?q=reservoir%20porosity', 'research', { q: 'reservoir porosity' }],
  ['/v1/research?q=helium', 'research', { q: 'helium' }],
  ['/v1/lab/quote?q=Ni%20Fe%20year:1900', 'lab_quote', { q: 'Ni Fe year:1900' }],
  ['/v1/lab/quote?q=Ni', 'lab_quote', { q: 'Ni' }],
];

describe('empty lists say why', () => {
  let emptySeen = 0;

  it.each(CASES)('%s (and MCP %s)', async (path, tool, args) => {
    const res = await fetch(`${served.server.base}${path}`, bearer(served.ctx.keys.professional));
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    const lists = resultLists(body);
    expect(lists.length).toBeGreaterThan(0);
    const empty: string = body.notes.empty ?? '';
    for (const list of lists) {
      if (list.empty) emptySeen++;
      // Said when empty, and only then.
      expect([list.name, list.empty && explained(empty, list.name)]).toEqual([list.name, list.empty]);
      if (!list.empty) expect([list.name, explained(empty, list.name)]).toEqual([list.name, false]);
    }
    if (!lists.some((l) => l.empty)) expect(body.notes.empty).toBeUndefined();

    // MCP answers from the same core: the same reason, kept among the answer's own notes.
    const result = (await mcp.callTool({ name: tool, arguments: args })) as CallToolResult;
    expect(result.isError ?? false).toBe(false);
    expect((result.structuredContent as Json).notes.empty).toBe(body.notes.empty);
  });

  it('met empty lists of several kinds', () => {
    expect(emptySeen).toBeGreaterThanOrEqual(8);
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decode } from '@toon-format/toon';
import { parse } from 'csv-parse/sync';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolError } from '../../helpers/mcp.js';
import { servedSample } from '../../helpers/x402.js';

/**
 * History tool results an agent can hold, through the official SDK client over real HTTP on the
 * bundled sample: what the model reads (the text block) counted in o200k tokens; a result over
 * its size keeps its most recent periods, and its note's arguments and URL give the rest.
 */
// biome-ignore lint/suspicious/noExplicitAny: answers are read loosely; each test asserts the shape it needs
type Json = Record<string, any>;

/** The most tokens a tool result's text may cost, and a year of one element's daily history. */
const RESULT_BUDGET = 10_000;
const YEAR_BUDGET = 8_000;

let served: Awaited<ReturnType<typeof servedSample>>;
let client: Client;
const auth = () => ({ headers: { authorization: `Bearer ${served.ctx.keys.professional}` } });

beforeAll(async () => {
  served = await servedSample();
  client = new Client({ name: 'ri-history-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${served.server.base}/mcp`), { requestInit: auth() }),
  );
  // As every host does: the tools first (the SDK then checks each result against its output schema).
  await client.listTools();
}, 120_000);
afterAll(async () => {
  await client?.close();
  await served?.close();
});

async function call(name: string, args: Json) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect([name, args, toolError(r)]).toEqual([name, args, null]);
  const text = (r.content as { text: string }[])[0]!.text;
  return { answer: r.structuredContent as Json, text, tokens: countTokens(text) };
}

async function rest(path: string): Promise<Json> {
  const res = await fetch(`${served.server.base}${path}`, auth());
  expect([path, res.status]).toEqual([path, 200]);
  return (await res.json()) as Json;
}

/** The arguments a left-out note gives for the periods before those kept. */
const restArgs = (note: string) => JSON.parse(/call again with (\{.*?\})\. /.exec(note)![1]!) as Json;
const wholeUrl = (note: string) => /The whole answer: (\S+) \(/.exec(note)![1]!;

describe('history tool results held to a size', () => {
  it("a daily history of Fe: its most recent periods within the budget, what is left out, and the rest by the note's arguments and URL", async () => {
    const whole = (await rest('/v1/elements/Fe/history?resolution=daily')).series as Json[];
    expect(whole.length).toBeGreaterThan(3_000);
    const first = await call('get_element_history', { symbol: 'Fe', resolution: 'daily' });
    expect(first.tokens).toBeLessThanOrEqual(RESULT_BUDGET);
    const kept = first.answer.series.length;
    expect(kept).toBeGreaterThan(300);
    expect(first.answer.series).toEqual(whole.slice(-kept));
    // The note is in the text the model reads, and says how many periods are left out.
    const note = first.answer.notes.left_out as string;
    expect((decode(first.text) as Json).notes.left_out).toBe(note);
    const to = whole[whole.length - kept - 1]!.period;
    expect(note).toContain(
      `The ${(whole.length - kept).toLocaleString('en-US')} oldest periods (${whole[0]!.period} to ${to}) are left out`,
    );
    expect(restArgs(note)).toEqual({
      symbol: 'Fe',
      resolution: 'daily',
      to,
      data_version: first.answer.data_version,
    });
    // Called again with the note's arguments, answer after answer: the whole history, in order.
    const parts = [first.answer.series as Json[]];
    let args: Json | null = restArgs(note);
    while (args) {
      const next = await call('get_element_history', args);
      expect(next.tokens).toBeLessThanOrEqual(RESULT_BUDGET);
      expect(next.answer.series.at(-1).period).toBe(args.to);
      parts.unshift(next.answer.series);
      args = next.answer.notes.left_out ? restArgs(next.answer.notes.left_out) : null;
      expect(parts.length).toBeLessThan(40);
    }
    expect(parts.flat()).toEqual(whole);
    // The URL of the whole answer answers it, as JSON and as CSV.
    const url = wholeUrl(note);
    expect(url.startsWith(`${served.server.base}/v1/elements/Fe/history?`)).toBe(true);
    const byUrl = await fetch(url, auth());
    expect(byUrl.status).toBe(200);
    expect(((await byUrl.json()) as Json).series).toEqual(whole);
    const csv = await fetch(`${url}&format=csv`, auth());
    expect([csv.status, csv.headers.get('content-type')]).toEqual([200, 'text/csv; charset=utf-8']);
    expect((parse(await csv.text(), { columns: true }) as Json[]).map((r) => r.period)).toEqual(
      whole.map((p) => p.period),
    );
  });

  it('a year of daily history of one element comes whole, within its budget', async () => {
    for (const symbol of ['Fe', 'C', 'O']) {
      const whole = (await rest(`/v1/elements/${symbol}/history?resolution=daily`)).series as Json[];
      const year = whole.slice(-365);
      const got = await call('get_element_history', {
        symbol,
        resolution: 'daily',
        from: year[0]!.period,
        to: year.at(-1)!.period,
      });
      expect([symbol, got.answer.series.length, got.answer.notes.left_out]).toEqual([symbol, 365, undefined]);
      expect(got.answer.series).toEqual(year);
      expect([symbol, got.tokens <= YEAR_BUDGET]).toEqual([symbol, true]);
    }
  });

  it('a batch keeps the same most recent periods of each history, and the rest by last and to', async () => {
    const whole = (await rest('/v1/elements/history?symbols=Fe,Ni,Co&resolution=daily&last=2000')).histories;
    const got = await call('get_element_histories', { symbols: 'Fe,Ni,Co', resolution: 'daily', last: 2000 });
    expect(got.tokens).toBeLessThanOrEqual(RESULT_BUDGET);
    const kept = got.answer.histories[0].series.length;
    expect(kept).toBeGreaterThan(50);
    for (const [i, h] of got.answer.histories.entries())
      expect([h.symbol, h.series]).toEqual([whole[i].symbol, whole[i].series.slice(-kept)]);
    const note = got.answer.notes.left_out as string;
    const to = whole[0].series.at(-kept - 1).period;
    expect(note).toContain(
      `The periods up to ${to} are left out (Fe ${(2000 - kept).toLocaleString('en-US')},`,
    );
    const next = restArgs(note);
    expect(next).toMatchObject({ symbols: 'Fe,Ni,Co', last: 2000 - kept, to });
    const rest2 = await call('get_element_histories', next);
    expect(rest2.answer.histories[0].series).toEqual(
      whole[0].series.slice(-kept - rest2.answer.histories[0].series.length, -kept),
    );
    // The largest batch, daily: still within the budget.
    const symbols = 'H,He,Li,Be,B,C,N,O,F,Ne,Na,Mg,Al,Si,P,S,Cl,Ar,K,Ca';
    const twenty = await call('get_element_histories', { symbols, resolution: 'daily' });
    expect(twenty.tokens).toBeLessThanOrEqual(RESULT_BUDGET);
    expect(twenty.answer.histories).toHaveLength(20);
    expect(twenty.answer.notes.left_out).toMatch(/^The periods up to \d{4}-\d\d-\d\d are left out \(H /);
  });

  it("every element's daily history within the budget; a subject's range over MCP is REST's", async () => {
    const { elements } = (await call('list_elements', {})).answer;
    let cut = 0;
    for (const { symbol } of elements as Json[]) {
      const got = await call('get_element_history', { symbol, resolution: 'daily' });
      expect([symbol, got.tokens <= RESULT_BUDGET]).toEqual([symbol, true]);
      if (got.answer.notes.left_out) cut++;
    }
    expect(cut).toBeGreaterThan(50);
    const topic = (await call('search_subjects', { q: 'oxygen evolution' })).answer.results.find(
      (r: Json) => r.subject_type === 'topic',
    ).subject_id;
    const monthly = await call('get_subject_history', {
      subject_type: 'topic',
      subject_id: topic,
      resolution: 'monthly',
    });
    expect(monthly.tokens).toBeLessThanOrEqual(RESULT_BUDGET);
    // A range over MCP is REST's answer (the notes every answer shares aside).
    const range = { resolution: 'monthly', from: '2020-01', to: '2022-12', last: 24 };
    const ranged = await call('get_subject_history', { subject_type: 'topic', subject_id: topic, ...range });
    const byRest = await rest(
      `/v1/subjects/topic/${topic}/history?resolution=monthly&from=2020-01&to=2022-12&last=24`,
    );
    expect(ranged.answer.series).toEqual(byRest.series);
    expect(ranged.answer.series).toHaveLength(24);
  });

  it('refuses a range it cannot read with invalid_parameter naming the parameter', async () => {
    for (const [name, args, parameter] of [
      ['get_element_history', { symbol: 'Fe', resolution: 'daily', from: '2024-03' }, 'from'],
      ['get_element_history', { symbol: 'Fe', from: '2024', to: '2023' }, 'from'],
      ['get_element_history', { symbol: 'Fe', last: 0 }, 'last'],
      ['get_element_histories', { symbols: 'Fe,Ni', resolution: 'monthly', to: '2024-02-01' }, 'to'],
      ['get_subject_history', { subject_type: 'topic', subject_id: 'T10030', from: 'soon' }, 'from'],
    ] as const) {
      const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect([name, args, toolError(r)]).toEqual([
        name,
        args,
        expect.objectContaining({ code: 'invalid_parameter', parameter }),
      ]);
    }
  });
});

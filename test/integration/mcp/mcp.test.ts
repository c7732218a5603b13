import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decode, encode } from '@toon-format/toon';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevChain } from '../../../scripts/dev-chain.mjs';
import { OPERATIONS, operation, priceOf } from '../../../src/access/policy.js';
import { tableReady } from '../../../src/core/answer-text.js';
import { createLabService } from '../../../src/core/lab-service.js';
import { createMcp } from '../../../src/mcp/server.js';
import { usdToAtomic } from '../../../src/payments/networks.js';
import { sampleApp } from '../../helpers/app.js';
import { toolError, toolTerms } from '../../helpers/mcp.js';
import { expectLedgerMatchesChain, listen, PAYER, paidService, payingFetch } from '../../helpers/x402.js';

type Ctx = Awaited<ReturnType<typeof sampleApp>>;
let chain: DevChain;
let ctx: Ctx;
let server: { base: string; close(): Promise<void> };

let service: Awaited<ReturnType<typeof paidService>>;

beforeAll(async () => {
  service = await paidService();
  ({ chain, ctx, server } = service);
}, 120_000);

afterAll(async () => {
  await service?.close();
});

/** An official MCP SDK client over Streamable HTTP, with the key (if any) on the connection. */
async function connect(key?: string, base = server.base): Promise<Client> {
  const client = new Client({ name: 'ri-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: key ? { headers: { authorization: `Bearer ${key}` } } : {},
  });
  await client.connect(transport);
  // As every host does: the tools first. The SDK then checks each result against its tool's
  // output schema, so a result it cannot read fails here as it would for an agent.
  await client.listTools();
  return client;
}

const call = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  meta?: Record<string, unknown>,
) => (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;

const codeOf = (r: CallToolResult) => toolError(r)?.code;

/** The shared notes of a data version, read as a host reads a resource. */
async function readNotes(client: Client, uri: string): Promise<Record<string, string>> {
  const { contents } = await client.readResource({ uri });
  return (JSON.parse((contents[0] as { text: string }).text) as { notes: Record<string, string> }).notes;
}

const TOOLS = [
  'research',
  'get_element_ri',
  'search_subjects',
  'get_subject_ri',
  'get_subject_history',
  'get_subject_papers',
  'get_element_papers',
  'lab_quote',
  'lab_run',
  'list_elements',
  'get_element_history',
  'get_element_histories',
  'get_subject_elements',
  'list_versions',
  'get_changes',
];

async function aTopic(client: Client): Promise<string> {
  const r = await call(client, 'search_subjects', { q: 'oxygen evolution' });
  const results = (r.structuredContent as { results: { subject_type: string; subject_id: string }[] })
    .results;
  return results.find((x) => x.subject_type === 'topic')!.subject_id;
}

describe('the MCP tool server', () => {
  it('lists the tools with input and output schemas, true annotations, plan and price, and instructions', async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      // An outline: the answer's own fields with their JSON types, nothing nested; the fields every
      // answer has are named once, in the instructions (checked below), not in each outline.
      expect([t.name, Object.keys(t.outputSchema?.properties ?? {}).length > 0]).toEqual([t.name, true]);
      for (const field of ['canonical_url', 'notes', 'data_version'])
        expect([t.name, field, t.outputSchema?.properties?.[field]]).toEqual([t.name, field, undefined]);
      // The lab stores a quote and charges for a run: hosts must not take them for read-only.
      const writes = t.name === 'lab_quote' || t.name === 'lab_run';
      expect([t.name, t.annotations]).toEqual([
        t.name,
        writes
          ? { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
          : { readOnlyHint: true, openWorldHint: false },
      ]);
      expect(t.description!.length).toBeGreaterThan(40);
      const op = OPERATIONS.find((o) => 'tool' in o && o.tool === t.name)!;
      const plan = {
        public: 'Free, no key.',
        key: 'Any key',
        personal: 'Personal plan.',
        professional: 'Professional plan.',
      }[op.access];
      expect([t.name, t.description!.includes(plan)]).toEqual([t.name, true]);
      if (op.prices.length > 0) expect(t.description).toMatch(/ x402: \d+\.\d{2} USD/);
    }
    // Schemas say only what works: no daily subject history; sort is REST's, ris an alias of impact.
    const history = tools.find((t) => t.name === 'get_subject_history')!;
    expect((history.inputSchema.properties!.resolution as { enum: string[] }).enum).toEqual([
      'yearly',
      'monthly',
    ]);
    const elementPapers = tools.find((t) => t.name === 'get_element_papers')!;
    expect(elementPapers.inputSchema.properties!.sort).toMatchObject({
      enum: ['impact', 'newest', 'foundational', 'ris'],
      description: expect.stringMatching(/ris is accepted as an alias/),
    });
    for (const shared of ['canonical_url', 'data_version', 'notes'])
      expect(client.getInstructions()).toContain(shared);
    const papers = tools.find((t) => t.name === 'get_subject_papers')!;
    expect(Object.keys(papers.inputSchema.properties!).sort()).toEqual([
      'data_version',
      'limit',
      'sort',
      'subject_id',
      'subject_type',
    ]);
    // Portable to every host (the Inspector's --strict, run in test/e2e/mcp): a nullable field is
    // anyOf of single types, never a type list; lab_run's whole quote is a free-form object.
    const listing = JSON.stringify(tools);
    expect(listing).not.toMatch(/"type":\[/);
    expect(listing).not.toMatch(/"additionalProperties":\{\}/);
    const element = tools.find((t) => t.name === 'get_element_ri')!;
    expect(element.outputSchema?.properties?.hri).toEqual({ anyOf: [{ type: 'number' }, { type: 'null' }] });
    const run = tools.find((t) => t.name === 'lab_run')!;
    expect(run.inputSchema.properties!.quote).toMatchObject({ type: 'object', additionalProperties: true });
    await client.close();
  });

  it('answers every tool on the plan it needs with the same JSON as REST', async () => {
    const pro = await connect(ctx.keys.professional);
    const topic = await aTopic(pro);
    const quote = (await call(pro, 'lab_quote', { query: 'Ni Fe' })).structuredContent as {
      quote_id: string;
    };
    // q as GET /v1/lab/quote takes it: the same quote; both at once is refused (naming the second).
    expect(
      ((await call(pro, 'lab_quote', { q: 'Ni Fe' })).structuredContent as { quote_id: string }).quote_id,
    ).toBe(quote.quote_id);
    expect(toolError(await call(pro, 'lab_quote', { q: 'Ni', query: 'Fe' }))).toMatchObject({
      code: 'invalid_parameter',
      parameter: 'query',
    });
    const cases: [string, Record<string, unknown>, string][] = [
      ['get_element_ri', { symbol: 'fe' }, '/v1/elements/fe'],
      ['search_subjects', { q: 'iron' }, '/v1/subjects/search?q=iron'],
      ['get_subject_ri', { subject_type: 'topic', subject_id: topic }, `/v1/subjects/topic/${topic}`],
      [
        'get_subject_history',
        { subject_type: 'topic', subject_id: topic, resolution: 'monthly' },
        `/v1/subjects/topic/${topic}/history?resolution=monthly`,
      ],
      [
        'get_subject_papers',
        { subject_type: 'topic', subject_id: topic, limit: 5 },
        `/v1/subjects/topic/${topic}/papers?limit=5`,
      ],
      [
        'get_element_papers',
        { symbol: 'Ni', sort: 'newest', limit: 3 },
        '/v1/elements/Ni/papers?sort=newest&limit=3',
      ],
      // ris: the alias of impact REST takes (DESIGN §4), taken by the tools the same way.
      [
        'get_element_papers',
        { symbol: 'Fe', sort: 'ris', limit: 3 },
        '/v1/elements/Fe/papers?sort=ris&limit=3',
      ],
      [
        'get_subject_papers',
        { subject_type: 'topic', subject_id: topic, sort: 'ris', limit: 3 },
        `/v1/subjects/topic/${topic}/papers?sort=ris&limit=3`,
      ],
      [
        'research',
        { q: 'oxygen evolution nickel', page_size: 2 },
        '/v1/research?q=oxygen%20evolution%20nickel&page_size=2',
      ],
      [
        'lab_run',
        { quote_id: quote.quote_id, depth: 'papers_20' },
        `/v1/lab/run?quote_id=${quote.quote_id}&depth=papers_20`,
      ],
      ['list_elements', {}, '/v1/elements'],
      ['list_versions', {}, '/v1/versions'],
      ['list_elements', { symbols: 'Fe,ni' }, '/v1/elements?symbols=Fe,ni'],
      // A range (the whole daily history is held to a result's size: history-budget.test.ts).
      [
        'get_element_history',
        { symbol: 'Fe', resolution: 'daily', last: 300 },
        '/v1/elements/Fe/history?resolution=daily&last=300',
      ],
      [
        'get_element_history',
        { symbol: 'Fe', resolution: 'monthly', from: '2015-01', to: '2020-06' },
        '/v1/elements/Fe/history?resolution=monthly&from=2015-01&to=2020-06',
      ],
      [
        'get_element_histories',
        { symbols: 'Fe,Ni', resolution: 'monthly', from: '2018-01' },
        '/v1/elements/history?symbols=Fe,Ni&resolution=monthly&from=2018-01',
      ],
      [
        'get_subject_elements',
        { subject_type: 'topic', subject_id: topic },
        `/v1/subjects/topic/${topic}/elements`,
      ],
      ['get_changes', { kind: 'element', min_move: 1 }, '/v1/changes?kind=element&min_move=1'],
      ['get_changes', { symbol: 'fe', direction: 'up' }, '/v1/elements/fe/changes?direction=up'],
      [
        'get_changes',
        { subject_type: 'topic', subject_id: topic, limit: 5 },
        `/v1/subjects/topic/${topic}/changes?limit=5`,
      ],
    ];
    for (const [tool, args, path] of cases) {
      const r = await call(pro, tool, args);
      expect([tool, r.isError ?? false]).toEqual([tool, false]);
      const rest = await ctx.app.request(path, {
        headers: { authorization: `Bearer ${ctx.keys.professional}` },
      });
      expect(rest.status).toBe(200);
      const body = (await rest.json()) as Record<string, unknown> & { notes: Record<string, string> };
      const got = r.structuredContent as typeof body;
      // The same answer, but for the notes every answer of the version shares: those are read
      // once, from the resource notes.read names; the result keeps only its own.
      expect({ ...got, notes: null }).toEqual({ ...body, notes: null });
      const { read, ...own } = got.notes;
      expect(read).toBe(`research-intensity://notes/${body.data_version}`);
      const shared = await readNotes(pro, read!);
      for (const [key, text] of Object.entries(body.notes)) {
        if (key in own) expect(own[key]).toBe(text);
        else expect([tool, key, Object.values(shared)]).toEqual([tool, key, expect.arrayContaining([text])]);
      }
      expect(Object.keys(own).every((k) => k in body.notes)).toBe(true);
      // The text carries the answer itself (every value, in TOON), for hosts that give the model only `content`.
      const text = (r.content as { text: string }[])[0]!.text;
      expect(decode(text)).toEqual(tableReady(got));
      // Byte for byte what the TOON library writes (answer-text.ts is its algorithm in one pass).
      expect(text).toBe(encode(tableReady(got) as never, { delimiter: '|' }));
    }
    await pro.close();
  });

  it('keeps the tool list from growing past what it costs a model now, prices said', async () => {
    // As bench/mcp-tokens.mjs counts it (docs/mcp.md): the listing as JSON, with x402 on (each
    // priced tool's description then says its price too), for a caller without a key and with one.
    // The budget of issue 31 (bench/mcp-tokens.mjs reports it on the same listing).
    const LISTING_TOKENS = 3_500;
    for (const key of [undefined, ctx.keys.professional]) {
      const client = await connect(key);
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'get_changes')!.description).toMatch(/x402: \d+\.\d{2} USD/);
      expect(countTokens(JSON.stringify(tools))).toBeLessThanOrEqual(LISTING_TOKENS);
      await client.close();
    }
  });

  it('gates each tool exactly as REST: no key, a key on a plan too low', async () => {
    const plain = await sampleApp(); // a server that takes no per-call payment
    const local = await listen(plain.app as never);
    const anon = await connect(undefined, local.base);
    const free = await connect(plain.keys.free, local.base);
    const personal = await connect(plain.keys.personal, local.base);
    for (const name of TOOLS) {
      const op = OPERATIONS.find((o) => 'tool' in o && o.tool === name)!;
      const args = name === 'get_element_ri' ? { symbol: 'Fe' } : {};
      const r = await call(anon, name, args);
      if (op.access === 'public') expect(r.isError ?? false).toBe(false);
      else expect([name, codeOf(r)]).toEqual([name, 'authentication_required']);
    }
    // Below the plan: plan_required with required_plan (before the arguments are even used).
    for (const [client, name, args, plan] of [
      [free, 'get_subject_ri', { subject_type: 'topic', subject_id: 'T10001' }, 'personal'],
      [free, 'research', { q: 'iron' }, 'personal'],
      // A resolution above the plan, as REST's checkResolution.
      [free, 'get_element_history', { symbol: 'Fe', resolution: 'monthly' }, 'personal'],
      [personal, 'get_element_history', { symbol: 'Fe', resolution: 'daily' }, 'professional'],
      [personal, 'lab_quote', { query: 'Fe' }, 'professional'],
    ] as const) {
      const r = await call(client, name, args);
      expect(r.isError).toBe(true);
      expect(toolError(r)).toMatchObject({ code: 'plan_required', required_plan: plan });
    }
    for (const c of [anon, free, personal]) await c.close();
    await local.close();
    await plain.close();
  });

  it('answers user mistakes as tool results with the REST codes, never as protocol errors', async () => {
    const pro = await connect(ctx.keys.professional);
    const cases: [string, Record<string, unknown>, string][] = [
      ['get_element_ri', { symbol: 'Xx' }, 'unknown_symbol'],
      ['get_element_ri', {}, 'invalid_parameter'],
      ['get_element_ri', { symbol: 'Fe', extra: 1 }, 'invalid_parameter'],
      ['get_subject_ri', { subject_type: 'topic', subject_id: 'T99999999' }, 'unknown_subject'],
      ['get_subject_papers', { subject_type: 'galaxy', subject_id: 'x' }, 'invalid_parameter'],
      ['get_element_papers', { symbol: 'Fe', limit: 101 }, 'invalid_parameter'],
      [
        'get_subject_history',
        { subject_type: 'topic', subject_id: 'T1', resolution: 'daily' },
        'invalid_parameter',
      ],
      ['research', { q: 'zzqxv wwkpj' }, 'nothing_matched'],
      ['research', { q: 'a', paper: 'b' }, 'invalid_parameter'],
      ['lab_quote', { query: '-Fe' }, 'unusable_query'],
      ['lab_run', { quote_id: 'nope', depth: 'papers_20' }, 'unknown_quote'],
      ['no_such_tool', {}, 'not_found'],
      ['list_elements', { symbols: 'Fe,Xx' }, 'unknown_symbol'],
      ['get_element_history', { symbol: 'Xx' }, 'unknown_symbol'],
      ['get_element_history', { symbol: 'Fe', resolution: 'daily', from: '2024' }, 'invalid_parameter'],
      ['get_element_history', { symbol: 'Fe', last: 0 }, 'invalid_parameter'],
      ['get_element_histories', { symbols: 'Fe,Xx' }, 'unknown_symbol'],
      [
        'get_element_histories',
        { symbols: 'H,He,Li,Be,B,C,N,O,F,Ne,Na,Mg,Al,Si,P,S,Cl,Ar,K,Ca,Sc' },
        'invalid_parameter',
      ],
      ['get_element_papers', { symbol: 'Fe', keyword: 'no-such-keyword-anywhere' }, 'unknown_subject'],
      ['get_subject_history', { subject_type: 'topic', subject_id: 'T99999999' }, 'unknown_subject'],
      [
        'get_subject_elements',
        { subject_type: 'keyword', subject_id: 'no-such-keyword-anywhere' },
        'unknown_subject',
      ],
      ['get_changes', { since: '0123456789abcdef' }, 'unknown_data_version'],
      ['get_changes', { kind: 'metal' }, 'invalid_parameter'],
      ['search_subjects', { q: '' }, 'invalid_parameter'],
      ['list_versions', { all: true }, 'invalid_parameter'],
      ['lab_quote', { q: 'Fe', markdown: '```query\nNi\n```' }, 'invalid_parameter'],
      ['lab_run', { quote_id: 'nope', quote: {}, depth: 'papers_20' }, 'invalid_parameter'],
      ['lab_run', { quote_id: 'nope', depth: 'papers_1000' }, 'invalid_parameter'],
    ];
    for (const [tool, args, code] of cases) {
      const r = await call(pro, tool, args);
      expect([tool, r.isError, codeOf(r)]).toEqual([tool, true, code]);
    }
    // The texts name this door's parameters and tools, not REST's.
    expect(toolError(await call(pro, 'lab_quote', {}))).toMatchObject({
      code: 'invalid_parameter',
      parameter: 'q',
      detail: "Give exactly one of 'q', 'query' or 'markdown'.",
    });
    const unknown = toolError(await call(pro, 'lab_run', { quote_id: 'nope', depth: 'papers_20' }))!;
    expect(unknown).toMatchObject({ code: 'unknown_quote', parameter: 'quote_id' });
    expect(unknown.detail).toMatch(/\blab_quote\b/);
    expect(unknown.detail).not.toMatch(/\/v1\//);
    // A research page past the answer's last: refused, naming how many there are.
    const args = { q: 'hafnium', page_size: 10 };
    const { pages } = (await call(pro, 'research', args)).structuredContent as { pages: number };
    expect(pages).toBeLessThan(5);
    expect(toolError(await call(pro, 'research', { ...args, page: pages + 1 }))).toMatchObject({
      code: 'page_out_of_range',
      pages,
    });
    await pro.close();
  });

  it('returns the x402 terms for an unpaid priced tool, and takes a payment in _meta["x402/payment"]', async () => {
    const anon = await connect();
    const unpaid = await call(anon, 'get_subject_papers', {
      subject_type: 'topic',
      subject_id: await aTopic(await connect(ctx.keys.free)),
      limit: 50,
    });
    expect(unpaid.isError).toBe(true);
    const terms = toolTerms(unpaid);
    expect(terms.x402Version).toBe(2);
    expect(terms.accepts[0]!.amount).toBe(usdToAtomic(priceOf(operation('getSubjectPapers'), 50)!));
    // The x402 MCP transport's shape, and nothing the SDK would check against the output schema.
    expect(JSON.parse((unpaid.content as { text: string }[])[0]!.text)).toMatchObject({
      'x402/error': { code: 402, message: expect.any(String), data: terms },
    });
    expect(unpaid.structuredContent).toBeUndefined();
    // Priced as the tool's schema reads the arguments: a limit sent as text is still 50 papers.
    const asText = await call(anon, 'get_element_papers', { symbol: 'Fe', limit: '50' });
    expect(toolTerms(asText).accepts[0]!.amount).toBe(
      usdToAtomic(priceOf(operation('getElementPapers'), 50)!),
    );

    const { client } = payingFetch();
    const payload = await client.createPaymentPayload(terms);
    const before = await chain.balanceOf(PAYER.address);
    const args = {
      subject_type: 'topic',
      subject_id: terms.resource ? await aTopic(await connect(ctx.keys.free)) : '',
      limit: 50,
    };
    const paid = await call(anon, 'get_subject_papers', args, { 'x402/payment': payload });
    expect(paid.isError ?? false).toBe(false);
    const receipt = paid._meta?.['x402/payment-response'] as { success: boolean; transaction: string };
    expect(receipt.success).toBe(true);
    expect(before - (await chain.balanceOf(PAYER.address))).toBe(100_000n);
    // The same call again (an answer lost on the way) is the same answer, not charged again; the
    // payment for other arguments is a replay, refused with fresh terms.
    const again = await call(anon, 'get_subject_papers', args, { 'x402/payment': payload });
    expect(again.structuredContent).toEqual(paid.structuredContent);
    const replay = await call(
      anon,
      'get_subject_papers',
      { ...args, limit: 49 },
      { 'x402/payment': payload },
    );
    expect(replay.isError).toBe(true);
    expect(toolTerms(replay).error).toMatch(/already/);
    // A base64 string is accepted too; an error is never charged.
    const other = await client.createPaymentPayload(
      toolTerms(await call(anon, 'get_element_papers', { symbol: 'Fe' })),
    );
    const encoded = Buffer.from(JSON.stringify(other)).toString('base64');
    const wrong = await call(anon, 'get_element_papers', { symbol: 'Xx' }, { 'x402/payment': encoded });
    expect(codeOf(wrong)).toBe('unknown_symbol');
    const right = await call(anon, 'get_element_papers', { symbol: 'Fe' }, { 'x402/payment': encoded });
    expect(right.isError ?? false).toBe(false);
    expect(
      decodePaymentResponseHeader(
        Buffer.from(JSON.stringify(right._meta!['x402/payment-response'])).toString('base64'),
      ).success,
    ).toBe(true);
    expect(before - (await chain.balanceOf(PAYER.address))).toBe(100_000n + 20_000n);
    await anon.close();
  });

  it('an agent of the SDK client and the x402 client pays every priced tool: the answer, the receipt, the chain', async () => {
    const agent = await connect(); // no key: every priced tool is paid per call
    const topic = await aTopic(await connect(ctx.keys.free));
    const { client: wallet } = payingFetch();
    /** As an agent does: call, read the terms from the result, sign them, call again with the payment. */
    const pay = async (name: string, args: Record<string, unknown>) => {
      const unpaid = await call(agent, name, args);
      const terms = toolTerms(unpaid);
      const before = await chain.balanceOf(PAYER.address);
      const paid = await call(agent, name, args, {
        'x402/payment': await wallet.createPaymentPayload(terms),
      });
      expect([name, paid.isError ?? false, toolError(paid)]).toEqual([name, false, null]);
      const receipt = paid._meta?.['x402/payment-response'] as { success: boolean; transaction: string };
      expect([name, receipt.success, receipt.transaction]).toEqual([
        name,
        true,
        expect.stringMatching(/^0x/),
      ]);
      expect([name, before - (await chain.balanceOf(PAYER.address))]).toEqual([
        name,
        BigInt(terms.accepts[0]!.amount),
      ]);
      return paid.structuredContent as Record<string, unknown>;
    };
    // Every operation with a price in the table that a tool offers (get_changes three: the list,
    // an element's, a subject's, each at its own price); lab_run is priced by its quote.
    const pricedOps = OPERATIONS.filter((o) => 'tool' in o && o.prices.length > 0);
    const priced = pricedOps.map((o) => (o as { tool: string }).tool);
    const byOp: Record<string, Record<string, unknown>> = {
      getElementChanges: { symbol: 'ni' },
      getSubjectChanges: { subject_type: 'topic', subject_id: topic },
    };
    for (const [id, a] of Object.entries(byOp)) {
      const terms = toolTerms(await call(agent, 'get_changes', a));
      expect([id, terms.accepts[0]!.amount]).toEqual([
        id,
        usdToAtomic(priceOf(operation(id as 'getElementChanges'))!),
      ]);
    }
    const args: Record<string, Record<string, unknown>> = {
      research: { q: 'oxygen evolution nickel', page_size: 2 },
      search_subjects: { q: 'iron' },
      get_subject_ri: { subject_type: 'topic', subject_id: topic },
      get_subject_history: { subject_type: 'topic', subject_id: topic },
      get_subject_papers: { subject_type: 'topic', subject_id: topic, limit: 5 },
      get_subject_elements: { subject_type: 'topic', subject_id: topic },
      get_element_papers: { symbol: 'Ni', limit: 5 },
      get_element_history: { symbol: 'Ni', resolution: 'monthly' },
      get_element_histories: { symbols: 'Ni,Co', resolution: 'monthly' },
      lab_quote: { q: '+Ni +Fe' },
      get_changes: { kind: 'element,topic' },
    };
    const paidTools: string[] = [];
    for (const [i, name] of priced.entries()) {
      const a = byOp[pricedOps[i]!.id] ?? args[name];
      expect([name, a]).toEqual([name, expect.any(Object)]);
      const answer = await pay(name, a!);
      expect([name, typeof answer.data_version]).toEqual([name, 'string']);
      paidTools.push(name);
      if (name === 'lab_quote') {
        const run = await pay('lab_run', { quote_id: answer.quote_id, depth: 'papers_20' });
        expect((run.papers as unknown[]).length).toBeGreaterThan(0);
        paidTools.push('lab_run');
      }
    }
    expect(paidTools.sort()).toEqual([...priced, 'lab_run'].sort());
    await expectLedgerMatchesChain(chain, [ctx.state]);
    await agent.close();
  });

  it('answers a repeated read from its answer cache exactly as the SDK did, per plan, and never a priced call', async () => {
    const raw = async (key: string | undefined, id: number, args: Record<string, unknown>) => {
      const res = await fetch(`${server.base}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(key ? { authorization: `Bearer ${key}` } : {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'get_element_ri', arguments: args },
        }),
      });
      return (await res.json()) as { id: number; result: { structuredContent: { hri: number | null } } };
    };
    const first = await raw(ctx.keys.free, 1, { symbol: 'Ni' });
    const again = await raw(ctx.keys.free, 2, { symbol: 'Ni' });
    expect(again.id).toBe(2);
    expect(again.result).toEqual(first.result);
    expect(first.result.structuredContent.hri).toBeNull();
    // Another plan is another answer (HRI from Personal), never the free key's.
    const personal = await raw(ctx.keys.personal, 3, { symbol: 'Ni' });
    expect(typeof personal.result.structuredContent.hri).toBe('number');
    expect((await raw(ctx.keys.personal, 4, { symbol: 'Ni' })).result).toEqual(personal.result);
    expect((await raw(ctx.keys.free, 5, { symbol: 'Ni' })).result.structuredContent.hri).toBeNull();
  });

  it('sends a cached answer as one valid gzip stream (or identity) whose bytes decode to the SDK answer with the new id', async () => {
    const { request } = await import('node:http');
    const { gunzipSync } = await import('node:zlib');
    const post = (id: unknown, acceptEncoding?: string) =>
      new Promise<{ encoding: string | undefined; vary: string | undefined; bytes: Buffer }>((ok, fail) => {
        const req = request(`${server.base}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${ctx.keys.professional}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}),
          },
        });
        req.on('error', fail);
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () =>
            ok({
              encoding: res.headers['content-encoding'],
              vary: res.headers.vary,
              bytes: Buffer.concat(chunks),
            }),
          );
        });
        req.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: { name: 'list_elements', arguments: {} },
          }),
        );
      });
    const first = await post(1); // the SDK's own answer, identity
    expect(first.encoding).toBeUndefined();
    const sdk = JSON.parse(first.bytes.toString()) as { result: unknown };
    for (const [id, accept, encoding] of [
      [2, 'gzip, deflate, br', 'gzip'],
      ['a "quoted" id', 'gzip', 'gzip'],
      [3, 'br', undefined],
      [4, undefined, undefined],
      [5, 'gzip;q=0, br', undefined],
    ] as const) {
      const got = await post(id, accept);
      expect(got.encoding).toBe(encoding);
      expect(got.vary).toMatch(/accept-encoding/i);
      const text = (encoding === 'gzip' ? gunzipSync(got.bytes) : got.bytes).toString();
      expect(JSON.parse(text)).toEqual({ jsonrpc: '2.0', id, result: sdk.result });
    }
  });

  it("a tools/call answered directly equals the SDK transport's answer to the same call, for every tool and for errors", async () => {
    const mcp = createMcp({
      snapshots: ctx.snapshots,
      edition: 'full',
      publicUrl: 'http://127.0.0.1',
      lab: createLabService({ state: ctx.state, ttlSeconds: 600 }),
      payments: undefined,
      version: 'test',
    });
    const caller = { plan: 'professional' as const };
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const topic = await aTopic(await connect(ctx.keys.free));
    const calls: [string, Record<string, unknown>][] = [
      ['get_element_ri', { symbol: 'Mo' }],
      ['get_element_ri', { symbol: 'Xx' }],
      ['get_element_ri', { symbol: 'Fe', extra: 1 }],
      ['search_subjects', { q: 'catalysis' }],
      ['get_subject_ri', { subject_type: 'topic', subject_id: topic }],
      ['get_subject_history', { subject_type: 'topic', subject_id: topic }],
      ['get_subject_papers', { subject_type: 'topic', subject_id: topic, limit: 5 }],
      ['get_element_papers', { symbol: 'W', limit: 5 }],
      ['research', { q: 'tungsten carbide hardness', page_size: 3 }],
      ['lab_quote', { query: 'W C' }],
      ['no_such_tool', {}],
    ];
    for (const [i, [name, args]] of calls.entries()) {
      const message = { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name, arguments: args } };
      const viaSdk = await mcp.handle(
        new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body: JSON.stringify(message) }),
        caller,
        message,
      );
      const direct = await mcp.direct((h) => headers[h], caller, message);
      expect(typeof direct, name).toBe('string');
      const sdk = (await viaSdk.json()) as { result: Record<string, unknown> };
      const got = JSON.parse(direct as string) as { result: Record<string, unknown>; id: number };
      expect(got.id).toBe(i);
      if (name === 'lab_quote') {
        // Each quote has its own id, signature and times: the rest is the same.
        const own = ({ quote_id, signature, expires_at, issued_at, ...rest }: Record<string, unknown>) =>
          rest;
        expect(own(got.result.structuredContent as Record<string, unknown>)).toEqual(
          own(sdk.result.structuredContent as Record<string, unknown>),
        );
        expect(got.result.isError).toBe(sdk.result.isError);
      } else expect(got.result, name).toEqual(sdk.result);
    }
    // Research's response, asked with Accept-Encoding, comes compressed from where it was computed:
    // the same bytes as the plain response once decoded, with its encoding said.
    const ask = {
      jsonrpc: '2.0',
      id: 'r7',
      method: 'tools/call',
      params: { name: 'research', arguments: { q: 'tungsten carbide', page_size: 4 } },
    };
    const plain = await mcp.direct((h) => headers[h], caller, ask);
    for (const [accept, encoding, decode] of [
      ['gzip, deflate, br', 'br', brotliDecompressSync],
      ['gzip', 'gzip', gunzipSync],
    ] as const) {
      const encoded = await mcp.direct((h) => ({ ...headers, 'accept-encoding': accept })[h], caller, ask);
      expect(typeof encoded).toBe('object');
      const ready = encoded as { body: Buffer; headers: Record<string, string> };
      expect(ready.headers).toMatchObject({ 'content-encoding': encoding, vary: 'Accept-Encoding' });
      expect(decode(ready.body).toString()).toBe(plain);
    }
    // What the SDK must answer itself: no Accept for both types, a batch, another method.
    const wrongAccept: Record<string, string> = { ...headers, accept: 'application/json' };
    const message = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_element_ri', arguments: {} },
    };
    expect(await mcp.direct((h) => wrongAccept[h], caller, message)).toBeNull();
    expect(await mcp.direct((h) => headers[h], caller, [message])).toBeNull();
    expect(await mcp.direct((h) => headers[h], caller, { ...message, method: 'tools/list' })).toBeNull();
  });

  it('lists only the older edition tools in the enterprise edition, and says only what that edition serves', async () => {
    const ent = await sampleApp({ EDITION: 'enterprise' });
    const local = await listen(ent.app as never);
    const client = await connect(ent.keys.enterprise, local.base);
    const { tools } = await client.listTools();
    // What only the full edition has: its plans, research, the lab, per-call payment.
    const fullOnly = (text: string) =>
      text.match(
        /Personal|Professional|\blab\b|\blab_\w+|x402|\bpa(?:y|id|yment)\b|\bpric(?:e|ed)\b|\bresearch\b(?![ -](?:intensity|output|topics))/gi,
      );
    const said = (c: Client, list: typeof tools) => [
      c.getInstructions() ?? '',
      ...list.map((t) => `${t.name}: ${t.description} ${JSON.stringify(t.inputSchema)}`),
    ];
    // The full edition's texts do say them (the check below is not vacuous).
    const full = await connect(ctx.keys.professional);
    expect(said(full, (await full.listTools()).tools).filter(fullOnly).length).toBeGreaterThan(3);
    await full.close();
    expect(said(client, tools).map((text) => [text.slice(0, 30), fullOnly(text)])).toEqual(
      said(client, tools).map((text) => [text.slice(0, 30), null]),
    );
    expect(client.getInstructions()).toContain('null below the Enterprise plan');
    // Every gated tool names the plan that opens it, and the per-resolution plans say Enterprise.
    for (const t of tools) {
      const op = OPERATIONS.find((o) => 'tool' in o && o.tool === t.name)!;
      if (op.access === 'personal' || op.access === 'professional')
        expect([t.name, t.description!.includes('Enterprise plan.')]).toEqual([t.name, true]);
    }
    expect(tools.find((t) => t.name === 'get_element_history')!.description).toMatch(
      /monthly from Enterprise; daily from Enterprise/,
    );
    // The notes every answer shares: none on research or the lab, which this edition has not.
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(fullOnly(resourceTemplates[0]!.description!)).toBeNull();
    const fe = await call(client, 'get_element_ri', { symbol: 'Fe' });
    const notes = await readNotes(client, (fe.structuredContent as { notes: { read: string } }).notes.read);
    expect(Object.keys(notes)).not.toContain('lab');
    expect(Object.keys(notes)).not.toContain('research_papers');
    expect(Object.keys(notes)).toContain('papers');
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'get_element_ri',
        'search_subjects',
        'get_subject_ri',
        'get_subject_history',
        'get_subject_papers',
        'get_element_papers',
        'list_elements',
        'get_element_history',
        'get_element_histories',
        'get_subject_elements',
        'list_versions',
        'get_changes',
      ].sort(),
    );
    expect(codeOf(await call(client, 'research', { q: 'iron' }))).toBe('not_found');
    await client.close();
    await local.close();
    await ent.close();
  });

  it('refuses a bad key on the connection with 401 invalid_key', async () => {
    const res = await fetch(`${server.base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer ri_nope',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('invalid_key');
  });
});

describe('a stateless server', () => {
  it('opens no server-to-client stream: GET and DELETE answer 405 (no connection is held open)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${server.base}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      await res.text();
    }
  });

  it('names its route /mcp in the metrics (a tool call is not an unmatched request)', async () => {
    const client = await connect();
    await call(client, 'get_element_ri', { symbol: 'Fe' });
    await client.close();
    const metrics = await (await fetch(`${server.base}/metrics`)).text();
    expect(metrics).toMatch(/http_requests_total\{method="POST",route="\/mcp",status="200"\} [1-9]/);
    expect(metrics).not.toMatch(/method="POST",route="unmatched"/);
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevChain } from '../../../scripts/dev-chain.mjs';
import { bearer } from '../../helpers/app.js';
import { toolError, toolTerms } from '../../helpers/mcp.js';
import { PAY_TO, PAYER, paidService, payingFetch } from '../../helpers/x402.js';

/**
 * Nothing is sold that delivers nothing (issue 30): a research page past the last is refused
 * before any payment is asked, over REST and MCP; a lab quote offers a dearer depth only when it
 * delivers more papers; an element's keyword-filtered list counts what the filter leaves. Paid
 * calls go through the official x402 client on the local chain, so "never charged" is read from
 * the balances and the ledger, not from the service's word.
 */
let service: Awaited<ReturnType<typeof paidService>>;
let chain: DevChain;
let ctx: Awaited<ReturnType<typeof paidService>>['ctx'];
let base: string;

beforeAll(async () => {
  service = await paidService();
  ({ chain, ctx } = service);
  base = service.server.base;
}, 120_000);

afterAll(async () => {
  await service?.close();
});

const url = (path: string) => `${base}/v1${path}`;
type Json = Record<string, unknown>;

const balances = async () => ({
  payer: await chain.balanceOf(PAYER.address),
  payTo: await chain.balanceOf(PAY_TO),
});

/** A payment signed by PAYER for the terms a request is answered with. */
async function signedFor(path: string): Promise<string> {
  const res = await fetch(url(path));
  expect(res.status).toBe(402);
  const required = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
  return encodePaymentSignatureHeader(await payingFetch().client.createPaymentPayload(required));
}

async function connect(key?: string): Promise<Client> {
  const client = new Client({ name: 'ri-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: key ? { headers: { authorization: `Bearer ${key}` } } : {},
  });
  await client.connect(transport);
  await client.listTools(); // as hosts do: results are then checked against the output schemas
  return client;
}

const call = async (client: Client, name: string, args: Json, meta?: Json) =>
  (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;

const listed = (lists: Record<string, unknown[]>) => Object.values(lists).reduce((n, l) => n + l.length, 0);

describe('research: a page past the last is refused before any payment is asked', () => {
  it('REST: 404 page_out_of_range with the page count, no 402, and nothing charged with a payment attached', async () => {
    const question = 'q=hafnium&page_size=10';
    // Asked before any other page of the question: the service cannot have learnt its size yet.
    const cold = await fetch(url(`/research?${question}&page=5`));
    expect(cold.status).toBe(404);
    expect(cold.headers.get('content-type')).toBe('application/problem+json');
    expect(cold.headers.get('payment-required')).toBeNull();
    const problem = (await cold.json()) as Json;
    expect(problem).toMatchObject({ code: 'page_out_of_range', parameter: 'page' });
    const pages = problem.pages as number;
    expect(pages).toBeGreaterThanOrEqual(1);
    expect(pages).toBeLessThan(5);
    expect(problem.detail).toMatch(new RegExp(`\\b${pages} page`));

    // The count is the answer's own: its last page is sold, full, with next: null.
    const { fetch: pay } = payingFetch();
    const before = await balances();
    const last = await pay(url(`/research?${question}&page=${pages}`));
    expect(last.status).toBe(200);
    const body = (await last.json()) as { next: unknown; pages: number; lists: Record<string, unknown[]> };
    expect(body.next).toBeNull();
    expect(body.pages).toBe(pages);
    expect(listed(body.lists)).toBeGreaterThan(0);

    // The page after it, asked by the paying client: refused, so the client never pays.
    const past = await pay(url(`/research?${question}&page=${pages + 1}`));
    expect(past.status).toBe(404);
    expect(((await past.json()) as Json).code).toBe('page_out_of_range');
    expect(past.headers.get('payment-response')).toBeNull();
    const afterPaid = await balances();
    expect(before.payer - afterPaid.payer).toBe(50_000n);

    // A valid payment sent with the page past the last: refused, not settled, no ledger row.
    const payment = await signedFor(`/research?${question}&page=1`);
    const rows = (await ctx.state.listPayments()).length;
    const refused = await fetch(url(`/research?${question}&page=${pages + 1}`), {
      headers: { 'payment-signature': payment },
    });
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as Json).code).toBe('page_out_of_range');
    expect(refused.headers.get('payment-response')).toBeNull();
    expect(await balances()).toEqual(afterPaid);
    expect((await ctx.state.listPayments()).length).toBe(rows);
    // The payment was not used up: it still buys the first page.
    const first = await fetch(url(`/research?${question}&page=1`), {
      headers: { 'payment-signature': payment },
    });
    expect(first.status).toBe(200);
    expect(((await first.json()) as { pages: number }).pages).toBe(pages);
  });

  it('REST: a key holder gets the same 404 (no empty 200), and every page up to the count answers', async () => {
    const question = 'q=HER%20MoS2&page_size=10&lenses=now';
    const page = (n: number) =>
      ctx.app.request(`/v1/research?${question}&page=${n}`, bearer(ctx.keys.personal));
    const first = (await (await page(1)).json()) as { pages: number; next: unknown };
    expect(first.pages).toBeLessThan(5);
    for (let n = 2; n <= first.pages; n++) expect((await page(n)).status).toBe(200);
    const past = await page(first.pages + 1);
    expect(past.status).toBe(404);
    expect(await past.json()).toMatchObject({ code: 'page_out_of_range', pages: first.pages });
  });

  it('MCP research: the same refusal as a tool error, not the payment terms, and never charged', async () => {
    const anon = await connect();
    const args = { q: 'hafnium', page_size: 8, page: 5 };
    const unpaid = await call(anon, 'research', args);
    expect(unpaid.isError).toBe(true);
    const problem = toolError(unpaid) as Json;
    expect(problem).toMatchObject({ code: 'page_out_of_range', parameter: 'page' });
    const pages = problem.pages as number;
    expect(pages).toBeLessThan(5);

    // A payment made for a page that exists, sent with the page past the last: refused, not charged.
    const lastArgs = { ...args, page: pages };
    const terms = toolTerms(await call(anon, 'research', lastArgs));
    expect(terms.x402Version).toBe(2);
    const payload = await payingFetch().client.createPaymentPayload(terms);
    const before = await balances();
    const refused = await call(anon, 'research', args, { 'x402/payment': payload });
    expect(refused.isError).toBe(true);
    expect(toolError(refused)?.code).toBe('page_out_of_range');
    expect(refused._meta?.['x402/payment-response']).toBeUndefined();
    expect(await balances()).toEqual(before);
    // The same payment buys the last page, which says it is the last.
    const paid = await call(anon, 'research', lastArgs, { 'x402/payment': payload });
    expect(paid.isError ?? false).toBe(false);
    expect(paid.structuredContent).toMatchObject({ pages, next: null });
    // The receipt beside the answer (research's result is written in the worker, _meta added after).
    expect(paid._meta?.['x402/payment-response']).toMatchObject({
      success: true,
      transaction: expect.stringMatching(/^0x/),
    });
    expect(before.payer - (await balances()).payer).toBe(50_000n);
    await anon.close();
  });
});

type Deliverable = { papers: number; price: { usd: number }; run_price: { usd: number } };
type Quote = Json & {
  quote_id: string;
  matches: number;
  deliverables: Record<string, Deliverable | undefined>;
  not_offered: { depth: string; papers: number; reason: string }[];
};

async function aQuote(q: string): Promise<Quote> {
  const res = await fetch(url(`/lab/quote?q=${encodeURIComponent(q)}`), bearer(ctx.keys.professional));
  expect(res.status).toBe(200);
  return (await res.json()) as Quote;
}

describe('lab: a dearer depth that delivers nothing more is not sold', () => {
  it('a quote of 20 matches or fewer offers papers_20 only and says what papers_100 would deliver', async () => {
    const q = await aQuote('Au Pd');
    expect(q.matches).toBeGreaterThan(0);
    expect(q.matches).toBeLessThanOrEqual(20);
    expect(q.deliverables.papers_20).toMatchObject({ papers: q.matches, run_price: { usd: 0.04 } });
    expect(q.deliverables.papers_100).toBeUndefined();
    expect(q.not_offered).toEqual([
      { depth: 'papers_100', papers: q.matches, reason: expect.stringMatching(/same .*papers_20/) },
    ]);
    // Deterministic: the same query on the same data says the same.
    const again = await aQuote('Au Pd');
    expect([again.quote_id, again.deliverables, again.not_offered]).toEqual([
      q.quote_id,
      q.deliverables,
      q.not_offered,
    ]);
  });

  it('above 20 matches both depths are offered, each saying how many papers it delivers', async () => {
    const q = await aQuote('Hf');
    expect(q.matches).toBeGreaterThan(20);
    expect(q.matches).toBeLessThan(100);
    expect(q.deliverables.papers_20!.papers).toBe(20);
    expect(q.deliverables.papers_100).toMatchObject({ papers: q.matches, run_price: { usd: 0.19 } });
    expect(q.not_offered).toEqual([]);
  });

  it('a run of the depth not offered is refused before payment (REST, paid, and MCP); the offered one is sold', async () => {
    const q = await aQuote('Au Pd');
    const path = `/lab/run?quote_id=${q.quote_id}&depth=papers_100`;
    const unpaid = await fetch(url(path));
    expect(unpaid.status).toBe(400);
    expect(unpaid.headers.get('payment-required')).toBeNull();
    expect(await unpaid.json()).toMatchObject({
      code: 'depth_not_offered',
      parameter: 'depth',
      offered: ['papers_20'],
    });
    const { fetch: pay } = payingFetch();
    const before = await balances();
    const refused = await pay(url(path));
    expect(refused.status).toBe(400);
    expect(refused.headers.get('payment-response')).toBeNull();
    expect(await balances()).toEqual(before);
    const mcp = await connect();
    const tool = await call(mcp, 'lab_run', { quote_id: q.quote_id, depth: 'papers_100' });
    expect([tool.isError, toolError(tool)?.code]).toEqual([true, 'depth_not_offered']);
    await mcp.close();
    expect(await balances()).toEqual(before);
    const sold = await pay(url(`/lab/run?quote_id=${q.quote_id}&depth=papers_20`));
    expect(sold.status).toBe(200);
    expect(((await sold.json()) as { papers: unknown[] }).papers).toHaveLength(q.matches);
    expect(before.payer - (await balances()).payer).toBe(40_000n);
  });

  it('the signature covers what the quote says of its depths: editing it is quote_edited', async () => {
    const q = await aQuote('Au Pd');
    const post = (quote: Json) =>
      fetch(url('/lab/run'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(ctx.keys.professional).headers },
        body: JSON.stringify({ quote, depth: 'papers_20' }),
      });
    expect((await post(q)).status).toBe(200);
    for (const edited of [
      { ...q, not_offered: [] },
      { ...q, deliverables: { ...q.deliverables, papers_20: { ...q.deliverables.papers_20!, papers: 20 } } },
    ]) {
      const res = await post(edited);
      expect(res.status).toBe(400);
      expect(((await res.json()) as Json).code).toBe('quote_edited');
    }
  });
});

describe('element papers: total_ranked counts what the keyword filter leaves', () => {
  it('REST (paid) and MCP get_element_papers', async () => {
    const all = (await (
      await fetch(url('/elements/Fe/papers?limit=100'), bearer(ctx.keys.personal))
    ).json()) as {
      total_ranked: number;
      papers: { keywords: string[] }[];
    };
    expect(all.total_ranked).toBe(100);
    const counts = new Map<string, number>();
    for (const p of all.papers) for (const k of p.keywords) counts.set(k, (counts.get(k) ?? 0) + 1);
    const [once] = [...counts].find(([, n]) => n === 1)!;
    const [most, mostCount] = [...counts].sort((a, b) => b[1] - a[1])[0]!;

    const { fetch: pay } = payingFetch();
    const paid = await pay(url(`/elements/Fe/papers?keyword=${once}&limit=100`));
    expect(paid.status).toBe(200);
    const body = (await paid.json()) as { total_ranked: number; papers: unknown[] };
    expect([body.total_ranked, body.papers.length]).toEqual([1, 1]);

    const mcp = await connect(ctx.keys.personal);
    const r = await call(mcp, 'get_element_papers', { symbol: 'Fe', keyword: most, limit: 5 });
    expect(r.structuredContent).toMatchObject({ total_ranked: mostCount });
    expect((r.structuredContent as { papers: unknown[] }).papers).toHaveLength(Math.min(5, mostCount));
    await mcp.close();
  });
});

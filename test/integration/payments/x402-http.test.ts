import SwaggerParser from '@apidevtools/swagger-parser';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_SEPOLIA_USDC, type DevChain } from '../../../scripts/dev-chain.mjs';
import { LAB_DEPTHS, LAB_QUOTE_USD, OPERATIONS, operation, priceOf } from '../../../src/access/policy.js';
import { usdToAtomic } from '../../../src/payments/networks.js';
import { bearer, sampleApp } from '../../helpers/app.js';
import {
  expectLedgerMatchesChain,
  PAID_CONFIG,
  PAY_TO,
  PAYER,
  paidService,
  payingFetch,
} from '../../helpers/x402.js';

type Ctx = Awaited<ReturnType<typeof sampleApp>>;
let chain: DevChain;
let facilitator: FacilitatorClient;
let ctx: Ctx;
let server: { base: string; close(): Promise<void> };

let service: Awaited<ReturnType<typeof paidService>>;

beforeAll(async () => {
  service = await paidService();
  ({ chain, facilitator, ctx, server } = service);
}, 120_000);

afterAll(async () => {
  await service?.close();
});

const url = (path: string) => `${server.base}/v1${path}`;

/** A topic with element links, from the API itself. */
async function aTopic(): Promise<string> {
  const res = await fetch(url('/subjects/search?q=oxygen%20evolution'), bearer(ctx.keys.professional));
  const body = (await res.json()) as { results: { subject_type: string; subject_id: string }[] };
  return body.results.find((r) => r.subject_type === 'topic')!.subject_id;
}

async function aQuote(q = 'Ni Fe'): Promise<{ quote_id: string }> {
  const res = await fetch(url(`/lab/quote?q=${encodeURIComponent(q)}`), bearer(ctx.keys.professional));
  expect(res.status).toBe(200);
  return (await res.json()) as { quote_id: string };
}

async function terms(res: Response): Promise<PaymentRequired> {
  expect(res.status).toBe(402);
  const header = res.headers.get('payment-required');
  expect(header).toBeTruthy();
  return decodePaymentRequiredHeader(header!);
}

/** A payment signed by PAYER for the terms a request is answered with. */
async function signedFor(path: string, init: RequestInit = {}): Promise<string> {
  const required = await terms(await fetch(url(path), init));
  const { client } = payingFetch();
  return encodePaymentSignatureHeader(await client.createPaymentPayload(required));
}

const bearerInit = (key: string): RequestInit => ({ headers: { authorization: `Bearer ${key}` } });

const balances = async () => ({
  payer: await chain.balanceOf(PAYER.address),
  payTo: await chain.balanceOf(PAY_TO),
});

describe('402 terms (no key, no payment)', () => {
  it('the 402 kept ready for a URL has the headers of the first, which the route made', async () => {
    const names = (res: Response) =>
      [...res.headers.keys()].filter((n) => !['date', 'x-request-id', 'server-timing'].includes(n)).sort();
    const path = '/elements/Mn/history';
    const init = { headers: { 'accept-encoding': 'br' } };
    const first = await fetch(url(path), init);
    // (The first answers of a server may be made again while it learns the facilitator's networks.)
    await fetch(url(path), init);
    const kept = await fetch(url(path), init);
    expect(kept.status).toBe(402);
    expect(kept.headers.get('server-timing')).toMatch(/cache;desc=hit/);
    expect(names(kept)).toEqual(names(first));
    expect(kept.headers.get('vary')).toBe(first.headers.get('vary'));
  });

  it('every priced endpoint answers 402 with x402 v2 terms priced from the table', async () => {
    const topic = await aTopic();
    const quote = await aQuote();
    const cases: [string, number, RequestInit?][] = [
      ['/elements/Fe/history', priceOf(operation('getElementHistory'))!],
      ['/elements/Fe/papers', priceOf(operation('getElementPapers'), 20)!],
      ['/elements/Fe/papers?limit=21', priceOf(operation('getElementPapers'), 21)!],
      ['/subjects/search?q=iron', priceOf(operation('searchSubjects'))!],
      [`/subjects/topic/${topic}`, priceOf(operation('getSubject'))!],
      [`/subjects/topic/${topic}/history`, priceOf(operation('getSubjectHistory'))!],
      [`/subjects/topic/${topic}/elements`, priceOf(operation('getSubjectElements'))!],
      [`/subjects/topic/${topic}/papers?limit=100`, priceOf(operation('getSubjectPapers'), 100)!],
      ['/research?q=oxygen%20evolution%20nickel', priceOf(operation('research'))!],
      ['/lab/quote?q=Ni%20Fe', LAB_QUOTE_USD],
      [
        '/lab/quote',
        LAB_QUOTE_USD,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"Ni Fe"}' },
      ],
      [`/lab/run?quote_id=${quote.quote_id}&depth=papers_20`, LAB_DEPTHS.papers_20.usd - LAB_QUOTE_USD],
      [`/lab/run?quote_id=${quote.quote_id}&depth=papers_100`, LAB_DEPTHS.papers_100.usd - LAB_QUOTE_USD],
    ];
    for (const [path, usd, init] of cases) {
      const res = await fetch(url(path), init);
      const t = await terms(res);
      expect(t.x402Version).toBe(2);
      expect(t.resource?.url).toBe(`${server.base}/v1${path}`);
      expect(t.accepts).toHaveLength(1);
      expect(t.accepts[0]).toMatchObject({
        scheme: 'exact',
        network: 'eip155:84532',
        amount: usdToAtomic(usd),
        asset: BASE_SEPOLIA_USDC,
        payTo: PAY_TO,
        extra: { name: 'USDC', version: '2' },
      });
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const body = (await res.json()) as { code: string; price_usd: number };
      expect(body.code).toBe('payment_required');
      expect(body.price_usd).toBeCloseTo(usd, 9);
    }
  });

  it('the unpaid 402 of a URL is kept ready: the same terms every time, its own request id each time', async () => {
    const path = '/elements/Ag/history';
    const [a, b] = [await fetch(url(path)), await fetch(url(path))];
    expect([a.status, b.status]).toEqual([402, 402]);
    expect(b.headers.get('payment-required')).toBe(a.headers.get('payment-required'));
    const [bodyA, bodyB] = [
      (await a.json()) as Record<string, unknown>,
      (await b.json()) as Record<string, unknown>,
    ];
    expect(bodyA.request_id).toBe(a.headers.get('x-request-id'));
    expect(bodyB.request_id).toBe(b.headers.get('x-request-id'));
    expect(bodyB.request_id).not.toBe(bodyA.request_id);
    expect({ ...bodyB, request_id: null }).toEqual({ ...bodyA, request_id: null });
    expect(b.headers.get('cache-control')).toBe('no-store');
    expect(b.headers.get('content-type')).toBe('application/problem+json');
    // A route's own error is never kept in its place: an unknown symbol stays 404.
    expect((await fetch(url('/elements/Xx/history'))).status).toBe(404);
    expect((await fetch(url('/elements/Xx/history'))).status).toBe(404);
  });

  it('free calls never answer 402', async () => {
    for (const path of ['/elements', '/elements/Fe']) expect((await fetch(url(path))).status).toBe(200);
  });

  it('answers what cannot be answered with its own 4xx before any 402', async () => {
    const topic = await aTopic();
    const quote = await aQuote();
    const cases: [string, number, string, RequestInit?][] = [
      ['/elements/Xx/history', 404, 'unknown_symbol'],
      ['/elements/Fe/history?resolution=hourly', 400, 'invalid_parameter'],
      ['/elements/Fe/papers?limit=101', 400, 'invalid_parameter'],
      ['/subjects/topic/T99999999', 404, 'unknown_subject'],
      ['/subjects/topic/T99999999/elements', 404, 'unknown_subject'],
      [`/subjects/topic/${topic}/papers?bogus=1`, 400, 'invalid_parameter'],
      ['/research?q=a&paper=b', 400, 'invalid_parameter'],
      ['/lab/quote?q=-Fe', 400, 'unusable_query'],
      ['/lab/run?quote_id=nope&depth=papers_20', 404, 'unknown_quote'],
      [
        '/lab/run',
        400,
        'quote_edited',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ quote: { ...quote, matches: 1 }, depth: 'papers_20' }),
        },
      ],
    ];
    for (const [path, status, code, init] of cases) {
      const res = await fetch(url(path), init);
      expect([path, res.status]).toEqual([path, status]);
      expect(res.headers.get('payment-required')).toBeNull();
      expect(((await res.json()) as { code: string }).code).toBe(code);
    }
  });
});

describe('paid calls on the local chain', () => {
  it('pays one call of each endpoint family with @x402/fetch; balances move by exactly the prices', async () => {
    const topic = await aTopic();
    const quote = await aQuote('Cu');
    const { fetch: pay } = payingFetch();
    const before = await balances();
    const calls: [string, number, RequestInit?][] = [
      ['/elements/Fe/history', 0.05],
      [`/subjects/topic/${topic}/papers`, 0.02],
      ['/research?q=oxygen%20evolution%20nickel&page_size=2', 0.05],
      ['/lab/quote?q=Ni%20Co', 0.01],
      [`/lab/run?quote_id=${quote.quote_id}&depth=papers_20`, 0.04],
    ];
    let total = 0n;
    for (const [path, usd, init] of calls) {
      const res = await pay(url(path), init);
      expect([path, res.status]).toEqual([path, 200]);
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(receipt).toMatchObject({ success: true, network: 'eip155:84532' });
      expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      const body = (await res.json()) as { data_version: string };
      expect(body.data_version).toBe(ctx.version);
      total += BigInt(usdToAtomic(usd));
    }
    const after = await balances();
    expect(before.payer - after.payer).toBe(total);
    expect(after.payTo - before.payTo).toBe(total);
    const rows = await ctx.state.listPayments({ status: 'settled' });
    expect(rows.length).toBeGreaterThanOrEqual(calls.length);
    expect(
      rows
        .slice(0, calls.length)
        .map((r) => r.operation)
        .sort(),
    ).toEqual(['getElementHistory', 'getSubjectPapers', 'research', 'labQuote', 'labRun'].sort());
  });

  it('a paid subject answer shows HRI (the payment stands for the Personal plan)', async () => {
    const topic = await aTopic();
    const { fetch: pay } = payingFetch();
    const res = await pay(url(`/subjects/topic/${topic}`));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { notes: { hri: string } };
    expect(body.notes.hri).not.toMatch(/HRI is null/);
  });

  it('one rule for what a payment buys: the lowest plan that may make that exact request, at the price', async () => {
    const { fetch: pay } = payingFetch();
    const before = await balances();
    const series = async (res: Response) => {
      expect(res.status).toBe(200);
      return ((await res.json()) as { series: { hri: number | null }[] }).series;
    };
    // Yearly: any key may ask, so it is answered as a free key (HRI not shown).
    expect((await series(await pay(url('/elements/Fe/history')))).every((p) => p.hri === null)).toBe(true);
    // Monthly: Personal may ask (HRI shown); daily: Professional. Each at the endpoint's price.
    for (const resolution of ['monthly', 'daily']) {
      const unpaid = await fetch(url(`/elements/Fe/history?resolution=${resolution}`));
      expect((await terms(unpaid)).accepts[0]!.amount).toBe('50000');
      const points = await series(await pay(url(`/elements/Fe/history?resolution=${resolution}`)));
      expect(points.some((p) => p.hri !== null)).toBe(true);
    }
    expect(before.payer - (await balances()).payer).toBe(3n * 50_000n);
    // A free key asking for more than its plan is told the per-call price too.
    const refused = await fetch(url('/elements/Fe/history?resolution=monthly'), bearerInit(ctx.keys.free));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      code: 'plan_required',
      price_usd: 0.05,
      pay_per_call: true,
    });
    // The rule is stated where payers look.
    const known = (await (await fetch(`${service.server.base}/.well-known/x402`)).json()) as {
      what_a_payment_buys: string;
    };
    expect(known.what_a_payment_buys).toMatch(/lowest plan that may make that exact request/);
    expect(await (await fetch(`${service.server.base}/pricing`)).text()).toContain(
      'lowest plan that may make that exact request',
    );
  });

  it('never charges what it cannot answer, even with a valid signed payment', async () => {
    const nothing = '/research?q=zzqxv%20wwkpj';
    const payment = await signedFor(nothing);
    const before = await balances();
    const rowsBefore = (await ctx.state.listPayments()).length;
    // Nothing matches this question: verified, computed, 404, not settled.
    const res = await fetch(url(nothing), { headers: { 'payment-signature': payment } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe('nothing_matched');
    expect(res.headers.get('payment-response')).toBeNull();
    // An unknown symbol with a payment attached: its own 404.
    const history = await signedFor('/elements/Fe/history');
    const unknown = await fetch(url('/elements/Xx/history'), { headers: { 'payment-signature': history } });
    expect(unknown.status).toBe(404);
    expect(await balances()).toEqual(before);
    expect((await ctx.state.listPayments()).length).toBe(rowsBefore);
    // Neither payment was used up: the one for Fe still buys Fe's answer.
    const ok = await fetch(url('/elements/Fe/history'), { headers: { 'payment-signature': history } });
    expect(ok.status).toBe(200);
    expect(before.payer - (await balances()).payer).toBe(50_000n);
  });

  it('one payment buys one answer: a replay for another request is refused, a concurrent duplicate charged once', async () => {
    const path = '/elements/Ni/history';
    const payment = await signedFor(path);
    const before = await balances();
    const first = await fetch(url(path), { headers: { 'payment-signature': payment } });
    expect(first.status).toBe(200);
    const firstBody = await first.text();
    // The same request again (a client that lost the answer): the same bytes, not charged again.
    const retry = await fetch(url(path), { headers: { 'payment-signature': payment } });
    expect(retry.status).toBe(200);
    expect(await retry.text()).toBe(firstBody);
    const replay = await fetch(url('/elements/Cu/history'), { headers: { 'payment-signature': payment } });
    expect(replay.status).toBe(402);
    expect(((await replay.json()) as { code: string }).code).toBe('payment_replayed');

    const twice = await signedFor('/elements/Co/history');
    const both = await Promise.all(
      [0, 1].map(() => fetch(url('/elements/Co/history'), { headers: { 'payment-signature': twice } })),
    );
    // The second either waits for the first's settlement (the same answer) or finds the payment
    // held (402 payment_replayed), depending on which reaches the ledger first: never a charge more.
    const statuses = both.map((r) => r.status).sort();
    expect(statuses[0]).toBe(200);
    expect([200, 402]).toContain(statuses[1]);
    expect(before.payer - (await balances()).payer).toBe(2n * 50_000n);
  });

  it('a POST buys its body: the same payment with another body is a replay, never a free answer', async () => {
    const post = (body: unknown, payment?: string): RequestInit => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(payment ? { 'payment-signature': payment } : {}) },
      body: JSON.stringify(body),
    });
    const quotePayment = await signedFor('/lab/quote', post({ query: 'Ni Co' }));
    const before = await balances();
    const first = await fetch(url('/lab/quote'), post({ query: 'Ni Co' }, quotePayment));
    expect(first.status).toBe(200);
    const quote = (await first.json()) as { quote_id: string };
    // The same body again (a lost answer): answered, not charged again.
    const retry = await fetch(url('/lab/quote'), post({ query: 'Ni Co' }, quotePayment));
    expect(retry.status).toBe(200);
    // Another body on the same URL is another request.
    for (const other of [{ query: 'Cu Zn' }, { markdown: '```query\nPd Au\n```' }]) {
      const replay = await fetch(url('/lab/quote'), post(other, quotePayment));
      expect(replay.status).toBe(402);
      expect(((await replay.json()) as { code: string }).code).toBe('payment_replayed');
    }

    const runPayment = await signedFor('/lab/run', post({ quote_id: quote.quote_id, depth: 'papers_20' }));
    const run = await fetch(
      url('/lab/run'),
      post({ quote_id: quote.quote_id, depth: 'papers_20' }, runPayment),
    );
    expect(run.status).toBe(200);
    const other = await aQuote('Cu');
    const replay = await fetch(
      url('/lab/run'),
      post({ quote_id: other.quote_id, depth: 'papers_20' }, runPayment),
    );
    expect(replay.status).toBe(402);
    expect(((await replay.json()) as { code: string }).code).toBe('payment_replayed');
    const paid =
      BigInt(usdToAtomic(LAB_QUOTE_USD)) + BigInt(usdToAtomic(LAB_DEPTHS.papers_20.usd - LAB_QUOTE_USD));
    expect(before.payer - (await balances()).payer).toBe(paid);
  });

  it('a payment for another price or network is refused, and nothing is charged', async () => {
    const cheap = await signedFor('/subjects/search?q=iron'); // 0.01
    const before = await balances();
    const res = await fetch(url('/elements/Fe/history'), { headers: { 'payment-signature': cheap } }); // 0.05
    expect(res.status).toBe(402);
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe('payment_terms_mismatch');
    expect(body.detail).toMatch(/amount is 10000, the terms say 50000/);
    const garbage = await fetch(url('/elements/Fe/history'), {
      headers: { 'payment-signature': 'bm90IGpzb24' },
    });
    expect(garbage.status).toBe(402);
    expect(await balances()).toEqual(before);
  });
});

describe('more that is never charged', () => {
  it('a topic with no element links: its own 404 before any 402, and no charge with a payment attached', async () => {
    const snapshot = ctx.snapshots.acquire()!;
    const lonely = snapshot.db
      .prepare(
        "SELECT id FROM subjects s WHERE type = 'topic' AND NOT EXISTS (SELECT 1 FROM routed_elements r WHERE r.type = 'topic' AND r.id = s.id) LIMIT 1",
      )
      .pluck()
      .get() as string;
    snapshot.release();
    expect(lonely).toBeTruthy();
    const path = `/subjects/topic/${lonely}/elements`;
    const unpaid = await fetch(url(path));
    expect(unpaid.status).toBe(404);
    expect(unpaid.headers.get('payment-required')).toBeNull();
    expect(((await unpaid.json()) as { reason: string }).reason).toBe('no_element_links');
    const payment = await signedFor('/subjects/topic/T10001/elements'.replace('T10001', await aTopic()));
    const before = await balances();
    const paid = await fetch(url(path), { headers: { 'payment-signature': payment } });
    expect(paid.status).toBe(404);
    expect(await balances()).toEqual(before);
  });

  it('a data error (503, no snapshot to answer from) with a valid payment attached is not charged', async () => {
    const empty = await sampleApp(PAID_CONFIG, { facilitator });
    const required = await terms(await empty.app.request('/v1/elements/Fe/history'));
    const payment = encodePaymentSignatureHeader(await payingFetch().client.createPaymentPayload(required));
    empty.snapshots.stop(); // the data goes away: every answer is now a 503
    const before = await balances();
    const res = await empty.app.request('/v1/elements/Fe/history', {
      headers: { 'payment-signature': payment },
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { code: string }).code).toBe('data_unavailable');
    expect(res.headers.get('payment-response')).toBeNull();
    expect(await balances()).toEqual(before);
    expect(await empty.state.listPayments()).toEqual([]);
    await empty.close();
  });
});

describe('refusals with a valid payment attached', () => {
  it('a bad parameter, an unusable lab query, an unknown or edited or expired quote: their own 4xx, no charge, no ledger row', async () => {
    const quote = (await (
      await fetch(url('/lab/quote?q=Co'), bearer(ctx.keys.professional))
    ).json()) as Record<string, unknown>;
    const runPayment = await signedFor(`/lab/run?quote_id=${quote.quote_id}&depth=papers_20`);
    const quotePayment = await signedFor('/lab/quote?q=Fe');
    const historyPayment = await signedFor('/elements/Fe/history');
    const before = await balances();
    const rows = (await ctx.state.listPayments()).length;
    const post = (body: unknown, payment: string) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': payment },
      body: JSON.stringify(body),
    });
    const cases: [string, RequestInit, number, string][] = [
      [
        '/elements/Fe/history?resolution=hourly',
        { headers: { 'payment-signature': historyPayment } },
        400,
        'invalid_parameter',
      ],
      ['/lab/quote?q=-Fe', { headers: { 'payment-signature': quotePayment } }, 400, 'unusable_query'],
      [
        '/lab/run?quote_id=q_nope&depth=papers_20',
        { headers: { 'payment-signature': runPayment } },
        404,
        'unknown_quote',
      ],
      [
        '/lab/run',
        post({ quote: { ...quote, matches: 99_999 }, depth: 'papers_20' }, runPayment),
        400,
        'quote_edited',
      ],
    ];
    for (const [path, init, status, code] of cases) {
      const res = await fetch(url(path), init);
      expect([path, res.status, ((await res.json()) as { code: string }).code]).toEqual([path, status, code]);
      expect(res.headers.get('payment-response')).toBeNull();
    }
    // Expired: the same quote on a server whose clock has moved past its expiry.
    let now = new Date();
    const later = await sampleApp(PAID_CONFIG, { facilitator, now: () => now });
    const issued = (await (
      await later.app.request('/v1/lab/quote?q=Co', bearer(later.keys.professional))
    ).json()) as { quote_id: string; expires_at: string };
    now = new Date(Date.parse(issued.expires_at) + 1000);
    const expired = await later.app.request(`/v1/lab/run?quote_id=${issued.quote_id}&depth=papers_20`, {
      headers: { 'payment-signature': runPayment },
    });
    expect(expired.status).toBe(410);
    expect(await later.state.listPayments()).toEqual([]);
    await later.close();
    expect(await balances()).toEqual(before);
    expect((await ctx.state.listPayments()).length).toBe(rows);
    // None of those payments was used up.
    const ok = await fetch(url('/elements/Fe/history'), { headers: { 'payment-signature': historyPayment } });
    expect(ok.status).toBe(200);
  });
});

describe('a paid lab run whose quote expires before the retry', () => {
  it('is delivered to the retry of that very payment, charged once; the payment buys no other run', async () => {
    let now = new Date();
    // Its ledger is the shared one, so the chain and the ledger still agree (below).
    const later = await sampleApp(PAID_CONFIG, { facilitator, now: () => now, ledger: () => ctx.state });
    const issued = (await (
      await later.app.request('/v1/lab/quote?q=Ni', bearer(later.keys.professional))
    ).json()) as { quote_id: string; expires_at: string };
    const other = (await (
      await later.app.request('/v1/lab/quote?q=Co', bearer(later.keys.professional))
    ).json()) as { quote_id: string };
    const path = `/v1/lab/run?quote_id=${issued.quote_id}&depth=papers_20`;
    const required = await terms(await later.app.request(path));
    const payment = encodePaymentSignatureHeader(await payingFetch().client.createPaymentPayload(required));
    const before = await balances();
    // The answer is lost on the way (a dropped connection, a settlement still pending): the
    // payer repeats the request with the same payment after the quote has expired.
    const first = await later.app.request(path, { headers: { 'payment-signature': payment } });
    expect(first.status).toBe(200);
    const firstBody = await first.text();
    now = new Date(Date.parse(issued.expires_at) + 1000);
    const retry = await later.app.request(path, { headers: { 'payment-signature': payment } });
    expect(retry.status).toBe(200);
    expect(await retry.text()).toBe(firstBody);
    // Without the payment, or with it for another (expired) quote, the expiry holds.
    const unpaid = await later.app.request(path);
    expect(unpaid.status).toBe(410);
    const elsewhere = await later.app.request(`/v1/lab/run?quote_id=${other.quote_id}&depth=papers_20`, {
      headers: { 'payment-signature': payment },
    });
    expect(elsewhere.status).toBe(402);
    expect(((await elsewhere.json()) as { code: string }).code).toBe('payment_replayed');
    expect(before.payer - (await balances()).payer).toBe(BigInt(required.accepts[0]!.amount));
    await later.close();
  });
});

describe('keys and payments together', () => {
  it('a key whose plan covers the call is never asked to pay, even with a payment attached', async () => {
    const payment = await signedFor('/elements/Fe/history');
    const before = await balances();
    const res = await fetch(url('/elements/Fe/history'), {
      headers: { authorization: `Bearer ${ctx.keys.free}`, 'payment-signature': payment },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('payment-response')).toBeNull();
    expect(await balances()).toEqual(before);
  });

  it('a key below the plan gets 403 with the per-call price, and a valid payment is honoured with it', async () => {
    const res = await fetch(url('/elements/Fe/papers?limit=50'), bearer(ctx.keys.free));
    expect(res.status).toBe(403);
    const body = (await res.json()) as {
      code: string;
      price_usd: number;
      pay_per_call: boolean;
      detail: string;
    };
    expect(body).toMatchObject({ code: 'plan_required', price_usd: 0.1, pay_per_call: true });
    expect(body.detail).toMatch(/paid per call without a key/);
    const payment = await signedFor('/elements/Fe/papers?limit=50');
    const paidRes = await fetch(url('/elements/Fe/papers?limit=50'), {
      headers: { authorization: `Bearer ${ctx.keys.free}`, 'payment-signature': payment },
    });
    expect(paidRes.status).toBe(200);
    expect(decodePaymentResponseHeader(paidRes.headers.get('payment-response')!).success).toBe(true);
  });

  it('prices the request as its route parses it: none is quoted for one that does not parse', async () => {
    // 050 is 50 papers to the route, so it costs what 50 papers cost.
    for (const limit of ['050', '50']) {
      const res = await fetch(url(`/elements/Fe/papers?limit=${limit}`), bearer(ctx.keys.free));
      expect([limit, ((await res.json()) as { price_usd: number }).price_usd]).toEqual([limit, 0.1]);
    }
    // A limit the route refuses: the refusal offers no per-call price (paid, it would be a 400),
    // and without a key the answer is the 400 itself, never a demand for payment.
    for (const limit of ['101', 'abc', '50&limit=10', '%2050', '5e1']) {
      const refused = await fetch(url(`/elements/Fe/papers?limit=${limit}`), bearer(ctx.keys.free));
      const body = (await refused.json()) as Record<string, unknown>;
      expect([limit, refused.status, body.code, 'price_usd' in body]).toEqual([
        limit,
        403,
        'plan_required',
        false,
      ]);
      expect(body.detail).not.toMatch(/paid per call/);
      const unpaid = await fetch(url(`/elements/Fe/papers?limit=${limit}`));
      expect([limit, unpaid.status, unpaid.headers.get('payment-required')]).toEqual([limit, 400, null]);
      await unpaid.body?.cancel();
    }
  });
});

describe('when settlement or the facilitator fails', () => {
  it("a facilitator's refusal with no chain to read: no content, the outcome unknown, the row pending (never failed)", async () => {
    const failing: FacilitatorClient = {
      verify: (p, r) => facilitator.verify(p, r),
      settle: async (_p, r) => ({
        success: false,
        errorReason: 'insufficient_funds',
        transaction: '',
        network: r.network,
      }),
      getSupported: () => facilitator.getSupported(),
    };
    const broken = await sampleApp(PAID_CONFIG, { facilitator: failing });
    const path = '/elements/Fe/history';
    const required = await terms(await broken.app.request(`/v1${path}`));
    const payment = encodePaymentSignatureHeader(await payingFetch().client.createPaymentPayload(required));
    const before = await balances();
    const res = await broken.app.request(`/v1${path}`, { headers: { 'payment-signature': payment } });
    expect(res.status).toBe(503);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.code).toBe('settlement_pending');
    expect(body.detail).toMatch(/insufficient_funds.*this server cannot read the chain to confirm it/);
    expect(body.detail).not.toMatch(/[Nn]othing was charged/);
    expect(body).not.toHaveProperty('history');
    expect(await balances()).toEqual(before);
    const rows = await broken.state.listPayments();
    expect(rows.map((r) => r.status)).toEqual(['pending']);
    await broken.close();
  });

  it('with the facilitator unreachable it still states its terms, and a payment is 503 payment_unavailable', async () => {
    const down: FacilitatorClient = {
      verify: async () => {
        throw new Error('connect ECONNREFUSED');
      },
      settle: async () => {
        throw new Error('connect ECONNREFUSED');
      },
      getSupported: async () => {
        throw new Error('connect ECONNREFUSED');
      },
    };
    const away = await sampleApp(PAID_CONFIG, { facilitator: down });
    const required = await terms(await away.app.request('/v1/elements/Fe/history'));
    expect(required.accepts[0]?.amount).toBe('50000');
    const payment = encodePaymentSignatureHeader(await payingFetch().client.createPaymentPayload(required));
    const res = await away.app.request('/v1/elements/Fe/history', {
      headers: { 'payment-signature': payment },
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { code: string }).code).toBe('payment_unavailable');
    expect(await away.state.listPayments()).toEqual([]);
    await away.close();
  });
});

describe('a server that takes no per-call payment', () => {
  it('keeps its 401 with a note, and exposes no payment headers', async () => {
    const plain = await sampleApp();
    const res = await plain.app.request('/v1/elements/Fe/history');
    expect(res.status).toBe(401);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/takes no per-call payment/);
    expect(res.headers.get('access-control-expose-headers')).not.toMatch(/PAYMENT/);
    const own = await fetch(url('/elements'));
    expect(own.headers.get('access-control-expose-headers')).toMatch(/PAYMENT-REQUIRED/);
    await plain.close();
  });
});

describe('discovery', () => {
  it('GET /.well-known/x402 lists every priced operation with its price from the table', async () => {
    const res = await fetch(`${server.base}/.well-known/x402`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      networks: { network: string }[];
      operations: { method: string; path: string; price: Record<string, unknown>; networks: string[] }[];
    };
    expect(doc.networks.map((n) => n.network)).toEqual(['eip155:84532']);
    const priced = OPERATIONS.filter((o) => o.prices.length > 0 || 'pricedByQuote' in o);
    expect(doc.operations.map((o) => `${o.method} ${o.path}`).sort()).toEqual(
      priced.map((o) => `${o.method} /v1${o.path}`).sort(),
    );
    const history = doc.operations.find((o) => o.path === '/v1/elements/{symbol}/history')!;
    expect(history.price).toEqual({ usd: 0.05 });
    const papers = doc.operations.find((o) => o.path === '/v1/elements/{symbol}/papers')!;
    expect(papers.price.tiers).toEqual([
      { up_to_papers: 20, usd: 0.02 },
      { up_to_papers: 100, usd: 0.1 },
    ]);
    const run = doc.operations.find((o) => o.path === '/v1/lab/run' && o.method === 'GET')!;
    expect(run.price.by_depth_usd).toEqual({ papers_20: 0.04, papers_100: 0.19 });
  });

  it('every priced operation in the OpenAPI document carries x-payment-info and its 402', async () => {
    const doc = (await (await fetch(url('/openapi.json'))).json()) as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, unknown>; 'x-payment-info'?: unknown }>
      >;
    };
    for (const op of OPERATIONS) {
      const item = doc.paths[op.path]![op.method.toLowerCase()]!;
      const priced = op.prices.length > 0 || 'pricedByQuote' in op;
      expect([op.id, Boolean(item['x-payment-info'])]).toEqual([op.id, priced]);
      expect([op.id, '402' in item.responses]).toEqual([op.id, priced]);
    }
    await SwaggerParser.validate(structuredClone(doc) as never);
  });
});

describe('after every payment of this file', () => {
  // The other apps of this file share the chain but never settle: every transfer is this ledger's.
  it('the chain and the ledger agree: every transfer is a settled row, every settled row a transfer', async () => {
    await expectLedgerMatchesChain(service.chain, [service.ctx.state]);
  });
});

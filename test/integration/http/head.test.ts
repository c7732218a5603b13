import { request } from 'node:http';
import { connect } from 'node:net';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedSample } from '../../helpers/x402.js';

/**
 * HEAD is GET without the body (RFC 9110 9.3.2): the same status and header fields (ETag,
 * Cache-Control, Vary, Content-Encoding, the length the body would have), 304 for a matching
 * If-None-Match, the 402 and its terms on a priced route without a key. Through the real listener
 * (as `ri serve` serves) and through app.request(), on a server that takes payments. A HEAD never
 * pays: a payment sent with one is not looked at.
 */
const verifyCalls: unknown[] = [];
const settleCalls: unknown[] = [];
/** A facilitator that is never reached for terms (they fall back to EVM exact) and refuses every payment. */
const facilitator: FacilitatorClient = {
  getSupported: () => Promise.reject(new Error('not reachable')),
  verify: async (payload) => {
    verifyCalls.push(payload);
    return { isValid: false, invalidReason: 'invalid_exact_evm_payload_signature' } as never;
  },
  settle: async (payload) => {
    settleCalls.push(payload);
    throw new Error('no settlement in this test');
  },
};

let served: Awaited<ReturnType<typeof servedSample>>;
beforeAll(async () => {
  served = await servedSample(
    {
      EDITION: 'full',
      RATE_LIMIT_PER_IP: 10_000,
      X402_NETWORKS: ['base-sepolia'],
      X402_PAY_TO_EVM: `0x${'1'.repeat(40)}`,
    } as never,
    { facilitator },
  );
}, 120_000);
afterAll(async () => served?.close());

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** What differs between any two answers (clock, durations, the budget left) or is only framing. */
const VARYING = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding', 'server-timing']);

function comparable(entries: Iterable<[string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (VARYING.has(lower)) continue;
    out[lower] = /ratelimit/.test(lower) ? '*' : value;
  }
  return out;
}

function overHttp(method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const url = new URL(path, served.server.base);
  return new Promise((ok, fail) => {
    const req = request(
      { method, host: url.hostname, port: url.port, path: url.pathname + url.search, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const entries = Object.entries(res.headers).map(
            ([n, v]) => [n, Array.isArray(v) ? v.join(', ') : (v ?? '')] as [string, string],
          );
          ok({ status: res.statusCode!, headers: comparable(entries), body: Buffer.concat(chunks) });
        });
      },
    );
    req.on('error', fail);
    req.end();
  });
}

async function inProcess(method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const res = await served.ctx.app.request(path, { method, headers });
  return {
    status: res.status,
    headers: comparable(res.headers.entries()),
    body: Buffer.from(await res.arrayBuffer()),
  };
}

const WAYS = [
  ['the real listener', overHttp],
  ['app.request', inProcess],
] as const;

/** The GET's answer as a HEAD should have it: its headers, its body's length, no body. */
function asHead(get: Answer, wire: boolean): Answer {
  const headers = { ...get.headers };
  // Node frames a GET's body itself; app.request() gives the GET's Response, which has no length.
  if (get.status !== 304) headers['content-length'] = String(get.body.length);
  if (!wire && get.status === 304) delete headers['content-length'];
  return { status: get.status, headers, body: Buffer.alloc(0) };
}

const br = { 'accept-encoding': 'gzip, deflate, br' };
const keyed =
  (plan: 'free' | 'personal' | 'professional', more: Record<string, string> = br) =>
  () => ({
    ...more,
    authorization: `Bearer ${served.ctx.keys[plan]}`,
  });
const none =
  (more: Record<string, string> = {}) =>
  () =>
    more;

describe.each(WAYS)('HEAD through %s', (_way, send) => {
  const wire = send === overHttp;
  const cases: [string, string, () => Record<string, string>][] = [
    ['an element, identity', '/v1/elements/Fe', none()],
    ['an element, Brotli', '/v1/elements/Fe', none(br)],
    ['the list as CSV, gzip', '/v1/elements?format=csv', none({ 'accept-encoding': 'gzip' })],
    ['the list, Accept: text/csv', '/v1/elements', none({ ...br, accept: 'text/csv' })],
    ['keyed, Personal', '/v1/elements/Ni', keyed('personal')],
    ['a keyed history', '/v1/elements/Cu/history', keyed('free')],
    ['an unknown element (404, not cached)', '/v1/elements/Xx', none(br)],
    ['an unknown parameter (400)', '/v1/elements/Fe?x=1', none(br)],
    ['the API root', '/v1', none(br)],
  ];

  it.each(cases)(
    '%s: HEAD first (a miss), then GET, then HEAD again (a hit)',
    async (_name, path, headers) => {
      const id = { 'x-request-id': 'the-same-id' };
      const first = await send('HEAD', path, { ...id, ...headers() });
      const get = await send('GET', path, { ...id, ...headers() });
      const again = await send('HEAD', path, { ...id, ...headers() });
      expect(get.body.length).toBeGreaterThan(0);
      expect(first).toEqual(asHead(get, wire));
      expect(again).toEqual(asHead(get, wire));
      if (get.status === 200) expect(get.headers.etag).toMatch(/^W\/"/);
    },
  );

  it("answers If-None-Match with GET's ETag 304, as GET does", async () => {
    for (const headers of [br, { 'accept-encoding': 'gzip' }, {}] as Record<string, string>[]) {
      const etag = (await send('GET', '/v1/elements/Co', headers)).headers.etag!;
      const conditional = { ...headers, 'if-none-match': etag, 'x-request-id': 'same' };
      const get = await send('GET', '/v1/elements/Co', conditional);
      expect(get.status).toBe(304);
      expect(await send('HEAD', '/v1/elements/Co', conditional)).toEqual(asHead(get, wire));
    }
  });

  it.each(['/v1/elements/{el}/history', '/v1/subjects/search?q={el}', '/v1/elements/{el}/papers'])(
    'without a key, HEAD %s is the 402 with the terms GET gives',
    async (template) => {
      // URLs of each way's own, so that both GETs are made by the route (a repeated one is the
      // unpaid 402 kept by unpaid-cache.ts, which a HEAD does not use).
      const path = template.replace('{el}', wire ? 'Fe' : 'Ni');
      const id = { 'x-request-id': 'the-same-id' };
      const get = await send('GET', path, { ...id, ...br });
      expect(get.status).toBe(402);
      expect(get.headers['payment-required']).toBeTruthy();
      expect(await send('HEAD', path, { ...id, ...br })).toEqual(asHead(get, wire));
    },
  );
});

describe('a HEAD never pays', () => {
  it('a payment sent with a HEAD is not looked at: the 402 with the terms, the facilitator not asked', async () => {
    const path = '/v1/elements/Fe/history';
    const unpaid = await fetch(`${served.server.base}${path}`);
    const terms = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
    const accepted = terms.accepts[0]!;
    const payment = encodePaymentSignatureHeader({
      x402Version: 2,
      resource: terms.resource,
      accepted,
      payload: {
        signature: `0x${'ab'.repeat(65)}`,
        authorization: {
          from: `0x${'2'.repeat(40)}`,
          to: accepted.payTo,
          value: accepted.amount,
          validAfter: '0',
          validBefore: String(Math.floor(Date.now() / 1000) + accepted.maxTimeoutSeconds),
          nonce: `0x${'3'.repeat(64)}`,
        },
      },
    } as unknown as PaymentPayload);
    for (const [, send] of WAYS) {
      const head = await send('HEAD', path, { 'payment-signature': payment });
      expect(head.status).toBe(402);
      expect(head.headers['payment-required']).toBe(unpaid.headers.get('payment-required'));
    }
    expect(verifyCalls).toEqual([]);
    expect(settleCalls).toEqual([]);
    // The same payment with a GET is looked at (and refused by this facilitator).
    const get = await fetch(`${served.server.base}${path}`, { headers: { 'payment-signature': payment } });
    expect(get.status).toBe(402);
    expect(((await get.json()) as { code: string }).code).not.toBe('payment_required');
    expect(verifyCalls.length).toBeGreaterThan(0);
    expect(settleCalls).toEqual([]);
  });

  it('a HEAD of a lab quote stores no quote (a GET does)', async () => {
    const state = served.ctx.state;
    const save = state.saveQuote.bind(state);
    let saved = 0;
    state.saveQuote = (quote) => {
      saved++;
      return save(quote);
    };
    const pro = { authorization: `Bearer ${served.ctx.keys.professional}` };
    const q = '/v1/lab/quote?q=Ni%20Fe%20-Co';
    for (const [, send] of WAYS) {
      const head = await send('HEAD', q, pro);
      expect(head.status).toBe(200);
      expect(head.headers['cache-control']).toBe('no-store');
    }
    expect(saved).toBe(0);
    expect((await inProcess('GET', q, pro)).status).toBe(200);
    expect(saved).toBe(1);
  });
});

/**
 * Node's client never reads a body after a HEAD's answer, so the checks above could not see one:
 * here the answer's bytes are read off the socket to its close.
 */
function onTheWire(
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; head: string; rest: Buffer }> {
  const url = new URL(served.server.base);
  const lines = Object.entries({ host: url.host, ...headers, connection: 'close' }).map(
    ([n, v]) => `${n}: ${v}`,
  );
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () =>
      socket.write(`${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`),
    );
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, end).toString('latin1').toLowerCase();
      resolve({ status: Number(head.split(' ')[1]), head, rest: all.subarray(end + 4) });
    });
  });
}

const lengthOf = (head: string) => /\r\ncontent-length: *(\d+)/.exec(head)?.[1];

describe('HEAD over the real listener: no byte after the head, whatever the answer', () => {
  it.each([
    ['a cached read (a miss, then a hit)', '/v1/elements/Fe', br, 200],
    ['a 304', '/v1/elements/Co', { ...br, 'if-none-match': '*' }, 304],
    ['a 404', '/v1/elements/Xx', br, 404],
    ['a 400', '/v1/elements/Fe?x=1', br, 400],
    ['a 402 with its terms', '/v1/subjects/search?q=Co', br, 402],
    ['a path no route answers', '/v1/nowhere', {}, 404],
    ['the MCP endpoint (405)', '/mcp', {}, 405],
    ['a page', '/elements/Fe', { accept: 'text/html' }, 200],
    ['the health check', '/healthz', {}, 200],
    ['the OpenAPI document', '/v1/openapi.json', br, 200],
  ] as const)('%s', async (_name, path, headers, status) => {
    for (let i = 0; i < 2; i++) {
      const get = await onTheWire('GET', path, headers);
      const head = await onTheWire('HEAD', path, headers);
      expect([path, i, get.status, head.status, head.rest.length]).toEqual([path, i, status, status, 0]);
      // The length the GET's body has, where the GET states one.
      if (lengthOf(get.head) !== undefined && lengthOf(head.head) !== undefined)
        expect(lengthOf(head.head)).toBe(lengthOf(get.head));
    }
  });
});

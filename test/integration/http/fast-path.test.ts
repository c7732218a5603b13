import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fastPath } from '../../../src/http/fast-path/fast-path.js';
import { sampleApp } from '../../helpers/app.js';
import { freePort } from '../../helpers/x402.js';

/**
 * The fast path (fast-path.ts) answers cached GETs before Hono: two copies of the sample service, one
 * served through the fast path as `ri serve` does and one through @hono/node-server alone, must give
 * the same status, header lines (in order) and bytes to the same requests, each sent twice (a miss,
 * then a hit); and the fast path must actually answer the hits.
 */
type Ctx = Awaited<ReturnType<typeof sampleApp>>;
interface Served {
  ctx: Ctx;
  base: { host: string; port: number };
  /** Requests that reached the Hono listener. */
  honoCalls: number;
  close(): Promise<void>;
}

const OVERRIDES = {
  RATE_LIMIT_PER_IP: 150,
  EDITION: 'full' as const,
  X402_PAY_TO_EVM: `0x${'1'.repeat(40)}`,
  X402_FACILITATOR_URL: 'http://127.0.0.1:9/',
};

async function serve(withFront: boolean): Promise<Served> {
  const port = await freePort();
  // Both at the same public URL, so that links in the answers are the same.
  const ctx = await sampleApp(OVERRIDES as never);
  const served = { ctx, base: { host: '127.0.0.1', port }, honoCalls: 0 } as Served;
  const hono = getRequestListener(ctx.app.fetch);
  const counted = (req: IncomingMessage, res: ServerResponse) => {
    served.honoCalls++;
    return hono(req, res);
  };
  const server = createServer(withFront ? fastPath(ctx.app.fastPath, counted) : counted);
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  served.close = async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await ctx.close();
  };
  return served;
}

interface Raw {
  status: number;
  lines: string[];
  body: Buffer;
}

function send(
  s: Served,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
): Promise<Raw> {
  return new Promise((ok, fail) => {
    const req = request({ ...s.base, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => {
        const lines: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]!;
          const lower = name.toLowerCase();
          let value = res.rawHeaders[i + 1]!;
          // What differs between any two answers: the request id, the clock, and the durations.
          if (['x-request-id', 'date', 'x-ratelimit-reset', 'retry-after'].includes(lower)) value = '*';
          if (lower === 'server-timing') value = value.replace(/dur=[0-9.]+/g, 'dur=*');
          // The window's seconds left (the clock: a second can pass between the two answers).
          if (lower === 'ratelimit') value = value.replace(/;t=\d+/, ';t=*');
          lines.push(`${name}: ${value}`);
        }
        // A problem's body names its request id too, and a 429's the window's end (the clock again).
        const body = Buffer.from(
          Buffer.concat(chunks)
            .toString('latin1')
            .replace(/"request_id":"[^"]*"/g, '"request_id":"*"')
            .replace(/resets in \d+ s \(at [^)]*\)/g, 'resets in * s (at *)')
            .replace(/"retry_after":\d+/g, '"retry_after":*'),
          'latin1',
        );
        ok({ status: res.statusCode!, lines, body });
      });
    });
    req.on('error', fail);
    req.end();
  });
}

/** The two services' keys differ; the answer must not. */
const keyOf = (s: Served, plan: 'free' | 'personal') => ({ authorization: `Bearer ${s.ctx.keys[plan]}` });
const br = { 'accept-encoding': 'gzip, deflate, br' };

let viaFront: Served;
let viaHono: Served;
beforeAll(async () => {
  viaFront = await serve(true);
  viaHono = await serve(false);
}, 120_000);
afterAll(async () => {
  await viaFront?.close();
  await viaHono?.close();
});

/** Each kind: a name, and the request (method, path, headers) for a given service. */
const KINDS: [string, (s: Served) => [string, string, Record<string, string | string[]>]][] = [
  ['anonymous, Brotli', () => ['GET', '/v1/elements/Fe', br]],
  ['anonymous, identity', () => ['GET', '/v1/elements/Fe', {}]],
  ['anonymous, gzip', () => ['GET', '/v1/elements/Fe', { 'accept-encoding': 'gzip' }]],
  ['the list', () => ['GET', '/v1/elements', br]],
  ['keyed', (s) => ['GET', '/v1/elements/Fe', { ...br, ...keyOf(s, 'personal') }]],
  ['keyed, free plan', (s) => ['GET', '/v1/elements/Cu', { ...br, ...keyOf(s, 'free') }]],
  ['unknown key', () => ['GET', '/v1/elements/Fe', { ...br, authorization: 'Bearer ri_nope_nope' }]],
  ['not a bearer key', () => ['GET', '/v1/elements/Fe', { authorization: 'Basic abc' }]],
  ['If-None-Match, other tag', () => ['GET', '/v1/elements/Fe', { ...br, 'if-none-match': 'W/"x"' }]],
  ['HEAD', () => ['HEAD', '/v1/elements/Fe', br]],
  ['CSV', () => ['GET', '/v1/elements', { ...br, accept: 'text/csv' }]],
  ['pinned, bad version', () => ['GET', '/v1/elements/Fe', { ...br, 'ri-data-version': 'zz' }]],
  ['pinned, gone', () => ['GET', '/v1/elements/Fe', { ...br, 'ri-data-version': '0123456789abcdef' }]],
  [
    'preflight',
    () => ['OPTIONS', '/v1/elements/Fe', { origin: 'http://x', 'access-control-request-method': 'GET' }],
  ],
  ['no such resource', () => ['GET', '/v1/nothing', br]],
  ['no such element', () => ['GET', '/v1/elements/Xx', br]],
  ['method not allowed', () => ['DELETE', '/v1/elements/Fe', br]],
  ['too long', () => ['GET', `/v1/elements/Fe?x=${'a'.repeat(9000)}`, br]],
  ['unknown parameter', () => ['GET', '/v1/elements/Fe?x=1', br]],
  ['priced, no key (402)', () => ['GET', '/v1/elements/Fe/papers', br]],
  ['priced, keyed', (s) => ['GET', '/v1/elements/Fe/papers?limit=5', { ...br, ...keyOf(s, 'personal') }]],
  ['percent-escaped path', () => ['GET', '/v1/elements/%46e', br]],
  ['dot segment', () => ['GET', '/v1/x/../elements/Fe', br]],
  ['a given request id', () => ['GET', '/v1/elements/Fe', { ...br, 'x-request-id': 'given' }]],
  ['repeated Accept-Encoding', () => ['GET', '/v1/elements/Fe', { 'accept-encoding': ['gzip', 'br'] }]],
  ['OpenAPI document', () => ['GET', '/v1/openapi.json', br]],
];

describe('the fast path', () => {
  // First: the next test spends the rate limit. Both services are sent the same requests, so
  // that their rate limits stay in step.
  it('answers a cached GET itself, and hands anything else to Hono once', async () => {
    const both = (method: string, path: string, headers: Record<string, string>) =>
      Promise.all([viaFront, viaHono].map((s) => send(s, method, path, headers)));
    await both('GET', '/v1/elements/Ag', br);
    const before = viaFront.honoCalls;
    const [hit] = await both('GET', '/v1/elements/Ag', br);
    expect(hit!.lines).toContain('server-timing: cache;desc=hit, total;dur=*');
    expect(viaFront.honoCalls).toBe(before);
    await send(viaFront, 'GET', '/v1/elements/Ag', keyOf(viaFront, 'personal'));
    await send(viaFront, 'GET', '/v1/elements/Ag', keyOf(viaFront, 'personal'));
    await send(viaHono, 'GET', '/v1/elements/Ag', keyOf(viaHono, 'personal'));
    await send(viaHono, 'GET', '/v1/elements/Ag', keyOf(viaHono, 'personal'));
    expect(viaFront.honoCalls).toBe(before + 1);
    await both('HEAD', '/v1/elements/Ag', br);
    expect(viaFront.honoCalls).toBe(before + 2);
  });

  it("answers a feed's cached read itself too, after its token is checked", async () => {
    // The same requests to both services (each with a token of its own), so their metrics agree.
    const tokens = await Promise.all(
      [viaFront, viaHono].map(async (s) => {
        const account = await s.ctx.state.createAccount({ email: 'feeds@example.org', plan: 'personal' });
        return { s, account: account.id, ...(await s.ctx.state.createFeedToken(account.id)) };
      }),
    );
    const each = (f: (t: (typeof tokens)[number]) => Promise<Raw>) => Promise.all(tokens.map(f));
    const path = (token: string) => `/v1/feeds/subjects/topic/T10030?token=${token}`;
    for (const r of await each((t) => send(t.s, 'GET', path(t.token), br))) expect(r.status).toBe(200);
    const before = viaFront.honoCalls;
    const [hit] = await each((t) => send(t.s, 'GET', path(t.token), br));
    expect(hit!.lines).toContain('server-timing: cache;desc=hit, total;dur=*');
    expect(viaFront.honoCalls).toBe(before);
    // Revoked: refused (handed to Hono, which answers the problem), never the cached answer.
    await Promise.all(tokens.map((t) => t.s.ctx.state.revokeFeedToken(t.prefix, t.account)));
    for (const r of await each((t) => send(t.s, 'GET', path(t.token), br))) expect(r.status).toBe(401);
    expect(viaFront.honoCalls).toBe(before + 1);
  });

  it('gives the answers @hono/node-server alone gives, line for line and byte for byte', async () => {
    for (const [name, make] of KINDS)
      for (const round of [1, 2]) {
        const [a, b] = [viaFront, viaHono].map((s) => make(s));
        const got = await send(viaFront, ...a!);
        const want = await send(viaHono, ...b!);
        expect({ ...got, body: got.body.toString('base64') }, `${name} #${round}`).toEqual({
          ...want,
          body: want.body.toString('base64'),
        });
      }
    // A 304 for the cached answer's own tag, and the rate limit's 429 once the budget is spent.
    const tag = (await send(viaHono, 'GET', '/v1/elements/Fe', br)).lines.find((l) => l.startsWith('etag'));
    const inm = { ...br, 'if-none-match': tag!.slice('etag: '.length) };
    await send(viaFront, 'GET', '/v1/elements/Fe', br);
    expect(await send(viaFront, 'GET', '/v1/elements/Fe', inm)).toEqual(
      await send(viaHono, 'GET', '/v1/elements/Fe', inm),
    );
    for (let i = 0; i < 200; i++) {
      const [got, want] = [
        await send(viaFront, 'GET', '/v1/elements/Fe', br),
        await send(viaHono, 'GET', '/v1/elements/Fe', br),
      ];
      expect(got).toEqual(want);
      if (want.status === 429) break;
      expect(i).toBeLessThan(199);
    }
    // And the same counts by route and status in /metrics.
    const counts = async (s: Served) =>
      (await send(s, 'GET', '/metrics', {})).body
        .toString()
        .split('\n')
        .filter(
          (l) => l.startsWith('http_requests_total') || l.startsWith('http_request_duration_seconds_count'),
        );
    const frontCounts = await counts(viaFront);
    expect(frontCounts.length).toBeGreaterThan(10);
    expect(frontCounts).toEqual(await counts(viaHono));
  }, 60_000);
});

describe('the fast path when a middleware fails after the answer was chosen', () => {
  it('answers a 500 problem without the error text, never plain text', async () => {
    const failing = fastPath(
      (c) => {
        c.vars.set('requestId', 'req-front-1');
        c.vars.set('publicUrl', 'https://ri.example');
        throw new Error('secret detail of the failure');
      },
      () => {
        throw new Error('not handed on');
      },
    );
    const server = createServer(failing);
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const { port } = server.address() as { port: number };
    const errors: unknown[] = [];
    const log = console.error;
    console.error = (e: unknown) => errors.push(e);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/elements/Fe`);
      const text = await res.text();
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.headers.get('x-request-id')).toBe('req-front-1');
      expect(text).not.toContain('secret detail');
      expect(JSON.parse(text)).toMatchObject({
        status: 500,
        code: 'internal_error',
        type: 'https://ri.example/docs/errors#internal_error',
        instance: '/v1/elements/Fe',
        request_id: 'req-front-1',
      });
      expect(errors).toHaveLength(1);
    } finally {
      console.error = log;
      await new Promise<void>((ok) => server.close(() => ok()));
    }
  });
});

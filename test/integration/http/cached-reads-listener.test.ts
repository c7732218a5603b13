import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleApp } from '../../helpers/app.js';
import { listen } from '../../helpers/x402.js';

/**
 * Cached reads through the real listener (`serviceListener`, as `ri serve` serves, so through the
 * fast path) give the same status, headers and bytes as the same reads through `app.request()`,
 * which never passes the fast path: two copies of the sample service, the same requests in the same
 * order to each, each sent twice (a miss that fills the response cache, then a hit).
 */
type Ctx = Awaited<ReturnType<typeof sampleApp>>;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** What only the wire has (framing) or what differs between any two answers (clock, durations). */
const WIRE_ONLY = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

function comparable(entries: Iterable<[string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of entries) {
    const lower = name.toLowerCase();
    if (WIRE_ONLY.has(lower)) continue;
    let value = raw;
    if (lower === 'x-ratelimit-reset') value = '*';
    if (lower === 'server-timing') value = value.replace(/dur=[0-9.]+/g, 'dur=*');
    if (lower === 'ratelimit') value = value.replace(/;t=\d+/, ';t=*');
    out[lower] = value;
  }
  return out;
}

function overHttp(base: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((ok, fail) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const length = res.headers['content-length'];
          // The wire's framing: when Node sends a length, it is the body's.
          if (length !== undefined) expect(Number(length)).toBe(body.length);
          const entries = Object.entries(res.headers).map(
            ([n, v]) => [n, Array.isArray(v) ? v.join(', ') : (v ?? '')] as [string, string],
          );
          ok({ status: res.statusCode!, headers: comparable(entries), body });
        });
      },
    );
    req.on('error', fail);
    req.end();
  });
}

async function inProcess(ctx: Ctx, path: string, headers: Record<string, string>): Promise<Answer> {
  const res = await ctx.app.request(path, { headers });
  return {
    status: res.status,
    headers: comparable(res.headers.entries()),
    body: Buffer.from(await res.arrayBuffer()),
  };
}

let served: Ctx;
let server: { base: string; close(): Promise<void> };
let direct: Ctx;
beforeAll(async () => {
  served = await sampleApp();
  server = await listen(served.app as never);
  direct = await sampleApp();
}, 120_000);
afterAll(async () => {
  await server?.close();
  await served?.close();
  await direct?.close();
});

/** Sends one read to both services: the listener's answer and app.request()'s. */
async function both(
  path: string,
  headers: (ctx: Ctx) => Record<string, string> = () => ({}),
): Promise<[Answer, Answer]> {
  const id = { 'x-request-id': 'the-same-id' };
  return [
    await overHttp(server.base, path, { ...id, ...headers(served) }),
    await inProcess(direct, path, { ...id, ...headers(direct) }),
  ];
}

const br = { 'accept-encoding': 'gzip, deflate, br' };
const keyed = (plan: 'personal' | 'free') => (ctx: Ctx) => ({
  ...br,
  authorization: `Bearer ${ctx.keys[plan]}`,
});

describe('cached reads: the real listener answers as app.request()', () => {
  const cases: [string, string, (ctx: Ctx) => Record<string, string>][] = [
    ['identity', '/v1/elements/Fe', () => ({})],
    ['Brotli', '/v1/elements/Fe', () => br],
    ['gzip', '/v1/elements/Fe', () => ({ 'accept-encoding': 'gzip' })],
    ['the list, Brotli', '/v1/elements', () => br],
    ['CSV', '/v1/elements', () => ({ ...br, accept: 'text/csv' })],
    ['keyed, Personal', '/v1/elements/Ni', keyed('personal')],
    ['keyed, free', '/v1/elements/Cu', keyed('free')],
  ];

  it.each(cases)('%s: the miss, then the hit', async (_name, path, headers) => {
    const [missHttp, missDirect] = await both(path, headers);
    expect(missHttp.status).toBe(200);
    expect(missHttp).toEqual(missDirect);
    const [hitHttp, hitDirect] = await both(path, headers);
    expect(hitHttp.headers['server-timing']).toMatch(/^cache;desc=hit/);
    expect(hitHttp).toEqual(hitDirect);
    // The hit repeats the miss's bytes and headers, but for its timing.
    expect(hitHttp.body.equals(missHttp.body)).toBe(true);
    expect({ ...hitHttp.headers, 'server-timing': '', ratelimit: '', 'x-ratelimit-remaining': '' }).toEqual({
      ...missHttp.headers,
      'server-timing': '',
      ratelimit: '',
      'x-ratelimit-remaining': '',
    });
  });

  it('answers If-None-Match with the ETag of the encoding sent: 304, the same both ways', async () => {
    for (const headers of [br, { 'accept-encoding': 'gzip' }, {}] as Record<string, string>[]) {
      const [first] = await both('/v1/elements/Co', () => headers);
      const etag = first.headers.etag!;
      expect(etag).toMatch(/^W\/"/);
      const [http, inproc] = await both('/v1/elements/Co', () => ({ ...headers, 'if-none-match': etag }));
      expect(http.status).toBe(304);
      expect(http.body.length).toBe(0);
      expect(http).toEqual(inproc);
    }
  });

  it('answers a preflight with the request id, as every response', async () => {
    const headers = { origin: 'http://x', 'access-control-request-method': 'GET' };
    const res = await direct.app.request('/v1/elements/Fe', { method: 'OPTIONS', headers });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers many cached reads at once, over many connections, each with its own answer', async () => {
    // Hits made in one turn of the event loop are written together (fast-path.ts ResponseBatch).
    const symbols = ['H', 'He', 'Li', 'Be', 'B', 'C', 'N', 'O', 'F', 'Ne', 'Na', 'Mg', 'Al', 'Si', 'P', 'S'];
    const alone = new Map<string, Buffer>();
    for (const symbol of symbols) {
      const answer = await overHttp(server.base, `/v1/elements/${symbol}`, {});
      expect(answer.status).toBe(200);
      alone.set(symbol, answer.body);
    }
    const reads = symbols.flatMap((symbol) => [symbol, symbol, symbol]);
    const answers = await Promise.all(
      reads.map((symbol) =>
        overHttp(server.base, `/v1/elements/${symbol}`, { 'x-request-id': `read-${symbol}` }),
      ),
    );
    for (const [i, answer] of answers.entries()) {
      expect(answer.headers['server-timing']).toMatch(/^cache;desc=hit/);
      expect(answer.headers['x-request-id']).toBe(`read-${reads[i]}`);
      expect(answer.body.equals(alone.get(reads[i]!)!)).toBe(true);
    }
  });
});

import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedSample } from '../../helpers/x402.js';

/** A GET over real HTTP that keeps the bytes as sent (fetch would decode them). */
function rawGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | undefined>; body: Buffer }> {
  return new Promise((ok, fail) =>
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () =>
        ok({
          status: res.statusCode!,
          headers: res.headers as Record<string, string | undefined>,
          body: Buffer.concat(chunks),
        }),
      );
    })
      .on('error', fail)
      .end(),
  );
}

function decode(res: { headers: Record<string, string | undefined>; body: Buffer }): Buffer {
  const encoding = res.headers['content-encoding'];
  if (encoding === undefined) return res.body;
  if (encoding === 'br') return brotliDecompressSync(res.body);
  if (encoding === 'gzip') return gunzipSync(res.body);
  throw new Error(`unexpected content-encoding ${encoding}`);
}

/** Accept-Encoding header -> the encoding the answer must have (null: none). */
const CHOICES: [string | undefined, string | null][] = [
  [undefined, null],
  ['identity', null],
  ['gzip, deflate, br', 'br'],
  ['gzip', 'gzip'],
  ['gzip;q=0, br', 'br'],
  ['br;q=0', null],
  ['br;q=0, gzip', 'gzip'],
  ['br;q=0.5, gzip;q=0.8', 'gzip'],
  ['GZIP;Q=0.9, BR', 'br'],
  ['*', 'br'],
  ['*;q=0, identity', null],
  ['deflate', null],
];
const ae = (value: string | undefined): Record<string, string> =>
  value === undefined ? {} : { 'accept-encoding': value };

let served: Awaited<ReturnType<typeof servedSample>>;
let base: string;
let key: string;
beforeAll(async () => {
  served = await servedSample({ RATE_LIMIT_PER_IP: 1_000_000 });
  base = served.server.base;
  key = served.ctx.keys.personal;
}, 120_000);
afterAll(() => served?.close());

describe('compression once per answer', () => {
  // Each choice asks a fresh element first (the cache's miss path), then again (a hit).
  const symbols = ['Fe', 'Co', 'Ni', 'Cu', 'Zn', 'Ag', 'Au', 'Pt', 'Pd', 'Ti', 'Mn', 'Cr'];

  it('answers the same bytes after decoding in every encoding, chosen by Accept-Encoding q-values', async () => {
    for (const [i, [header, expected]] of CHOICES.entries()) {
      for (const path of [
        `/v1/elements/${symbols[i]}`,
        '/v1/elements',
        '/v1/elements?symbols=Fe,Co,Ni,Cu,Zn,Ag,Au,Pt,Pd,Ti',
      ]) {
        for (const attempt of ['miss', 'hit']) {
          const res = await rawGet(base + path, ae(header));
          expect(res.status, `${path} ${header} ${attempt}`).toBe(200);
          expect(res.headers['content-encoding'] ?? null, `${path} ${header} ${attempt}`).toBe(expected);
          expect(res.headers.vary).toMatch(/\bAccept-Encoding\b/);
          const identity = await rawGet(base + path);
          expect(identity.headers['content-encoding']).toBeUndefined();
          expect(decode(res).equals(identity.body), `${path} ${header} ${attempt}`).toBe(true);
          if (expected) expect(res.body.length).toBeLessThan(identity.body.length);
        }
      }
    }
  });

  it('keyed, CSV and web page answers are encoded the same way', async () => {
    const cases: [string, Record<string, string>][] = [
      ['/v1/elements/Fe', { authorization: `Bearer ${key}` }],
      ['/v1/elements', { accept: 'text/csv' }],
      ['/', {}],
      ['/elements/Fe', {}],
      ['/pricing', {}],
    ];
    for (const [path, headers] of cases) {
      const identity = await rawGet(base + path, headers);
      expect(identity.status).toBe(200);
      for (const [header, expected] of CHOICES)
        for (let n = 0; n < 2; n++) {
          const res = await rawGet(base + path, { ...headers, ...ae(header) });
          expect(res.headers['content-encoding'] ?? null, `${path} ${header}`).toBe(expected);
          expect(res.headers.vary, path).toMatch(/\bAccept-Encoding\b/);
          expect(decode(res).equals(identity.body), `${path} ${header}`).toBe(true);
        }
    }
  });

  it('answers a large answer at once in every encoding, the other ones asked while still being made', async () => {
    const keyed = { authorization: `Bearer ${key}` };
    for (const [i, first] of ['br', 'gzip', 'identity'].entries()) {
      // A paper list of 100 (tens of KB, compressed on the thread pool), asked in one encoding,
      // then at once in the others: they come while the cache is still making them, or just after.
      const sort = ['impact', 'newest', 'foundational'][i]!;
      const path = `${base}/v1/subjects/topic/T10030/papers?limit=100&sort=${sort}`;
      const asked = [first, ...['br', 'gzip', 'identity'].filter((e) => e !== first)];
      const get = (e: string) => rawGet(path, { ...keyed, 'accept-encoding': e });
      const firstAnswer = await get(first);
      expect(firstAnswer.headers['server-timing']).not.toMatch(/cache;desc=hit/);
      const answers = [firstAnswer, ...(await Promise.all(asked.slice(1).map(get)))];
      const identity = answers[asked.indexOf('identity')]!;
      expect(identity.body.length).toBeGreaterThan(16 * 1024);
      for (const [j, res] of answers.entries()) {
        expect(res.status).toBe(200);
        expect(res.headers['content-encoding'] ?? 'identity', `${first}: ${asked[j]}`).toBe(asked[j]);
        expect(decode(res).equals(identity.body)).toBe(true);
      }
      expect(new Set(answers.map((a) => a.headers.etag)).size).toBe(3);
      // And again, from the cache: the same bytes and tags.
      for (const [j, e] of asked.entries()) {
        const again = await rawGet(path, { ...keyed, 'accept-encoding': e });
        expect(again.headers['server-timing']).toMatch(/cache;desc=hit/);
        expect(again.headers.etag).toBe(answers[j]!.headers.etag);
        expect(decode(again).equals(identity.body)).toBe(true);
      }
    }
  });

  it('gives each representation its own ETag and answers If-None-Match with 304 for each', async () => {
    const path = `${base}/v1/elements/Fe`;
    const tags = new Map<string | null, string>();
    for (const [header, expected] of CHOICES) {
      const first = await rawGet(path, ae(header));
      const etag = first.headers.etag!;
      expect(etag).toMatch(/^W\/"[^"]+"$/);
      // Representations with the same encoding share a tag; different encodings never do.
      if (tags.has(expected)) expect(etag).toBe(tags.get(expected));
      else expect([...tags.values()]).not.toContain(etag);
      tags.set(expected, etag);
      for (const sent of [etag, etag.slice(2), `"other", ${etag}`]) {
        const fresh = await rawGet(path, { ...ae(header), 'if-none-match': sent });
        expect(fresh.status, `${header} ${sent}`).toBe(304);
        expect(fresh.body.length).toBe(0);
        expect(fresh.headers.etag).toBe(etag);
        expect(fresh.headers.vary).toMatch(/\bAccept-Encoding\b/);
        expect(fresh.headers['content-encoding']).toBeUndefined();
      }
    }
    // A tag of another encoding does not match: the client has not got this representation.
    const stale = await rawGet(path, { 'accept-encoding': 'br', 'if-none-match': tags.get('gzip')! });
    expect(stale.status).toBe(200);
    expect(stale.headers['content-encoding']).toBe('br');
  });

  it('keeps Vary: Accept and Accept-Encoding on a route answering JSON or CSV, first time and cached', async () => {
    const keyed = { authorization: `Bearer ${key}` };
    for (const accept of ['application/json', 'text/csv'])
      for (const attempt of ['miss', 'hit']) {
        const res = await rawGet(`${base}/v1/elements/Ni/history?resolution=monthly`, {
          ...keyed,
          accept,
          'accept-encoding': 'gzip, deflate, br',
        });
        expect(res.status).toBe(200);
        const vary = (res.headers.vary ?? '').split(',').map((v) => v.trim().toLowerCase());
        expect(vary, `${accept} ${attempt}`).toEqual(expect.arrayContaining(['accept', 'accept-encoding']));
        expect(res.headers['content-encoding'], `${accept} ${attempt} (${res.body.length} bytes)`).toBe('br');
        expect(res.headers.etag, `${accept} ${attempt}`).toMatch(/^W\/"[^"]+-br"$/);
      }
  });

  it('leaves small answers and errors uncompressed, still with Vary', async () => {
    for (const path of ['/v1/elements/Xq', '/healthz']) {
      const res = await rawGet(base + path, { 'accept-encoding': 'gzip, deflate, br' });
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers.vary).toMatch(/\bAccept-Encoding\b/);
      expect(res.body.length).toBeLessThan(1024);
    }
  });

  it("answers a HEAD with its GET's encoding, ETag, Vary and length, and no body", async () => {
    // A cached answer, one the cache does not keep (the OpenAPI document) and a page.
    for (const path of ['/v1/elements', '/v1/openapi.json', '/docs']) {
      const accept = { 'accept-encoding': 'br' };
      const get = await rawGet(base + path, accept);
      const head = await new Promise<{
        status: number;
        headers: Record<string, string | undefined>;
        body: Buffer;
      }>((ok, fail) =>
        request(base + path, { method: 'HEAD', headers: accept }, (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (d: Buffer) => chunks.push(d));
          r.on('end', () =>
            ok({
              status: r.statusCode!,
              headers: r.headers as Record<string, string | undefined>,
              body: Buffer.concat(chunks),
            }),
          );
        })
          .on('error', fail)
          .end(),
      );
      expect(get.status, path).toBe(200);
      expect(head.status, path).toBe(200);
      expect(head.body.length, path).toBe(0);
      expect(head.headers['content-length'], path).toBe(String(get.body.length));
      for (const name of ['content-encoding', 'content-type', 'etag', 'vary', 'cache-control'])
        expect(head.headers[name], `${path} ${name}`).toBe(get.headers[name]);
    }
  });
});

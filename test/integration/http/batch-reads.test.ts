import SwaggerParser from '@apidevtools/swagger-parser';
import { decodePaymentRequiredHeader } from '@x402/core/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operation, priceOf } from '../../../src/access/policy.js';
import { usdToAtomic } from '../../../src/payments/networks.js';
import { bearer } from '../../helpers/app.js';
import { PAID_CONFIG, servedSample } from '../../helpers/x402.js';

/** Issue 12, point 5: batch reads and CSV, over real HTTP on the bundled sample. */
// biome-ignore lint/suspicious/noExplicitAny: answers are read loosely; each test asserts the shape it needs
type Json = Record<string, any>;
/** One element's history without a key, from the price table: the per-symbol price of a batch. */
const ELEMENT_HISTORY_USD = priceOf(operation('getElementHistory'))!;
let served: Awaited<ReturnType<typeof servedSample>>;
let paying: Awaited<ReturnType<typeof servedSample>>;
let free: ReturnType<typeof bearer>;
let personal: ReturnType<typeof bearer>;

beforeAll(async () => {
  served = await servedSample();
  paying = await servedSample(PAID_CONFIG);
  free = bearer(served.ctx.keys.free);
  personal = bearer(served.ctx.keys.personal);
}, 60_000);
afterAll(async () => {
  await served?.close();
  await paying?.close();
});

const url = (path: string, base = served.server.base) => `${base}${path}`;
async function getJson(path: string, init: RequestInit = {}, base = served.server.base) {
  const res = await fetch(url(path, base), init);
  return { res, body: (await res.json()) as Json };
}
const withAccept = (init: { headers: Record<string, string> }, accept: string) => ({
  headers: { ...init.headers, accept },
});

/** RFC 4180, read independently of the service's writer: records of fields, quotes undone. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"' && field === '') {
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        field += text.slice(i, q);
        i = q + 1;
        if (text[i] === '"') {
          field += '"';
          i++;
        } else break;
      }
      continue;
    }
    if (ch === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (ch === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else {
      field += ch;
      i++;
    }
  }
  expect(field).toBe('');
  expect(record).toEqual([]);
  return records;
}
const cell = (v: unknown) => (v === null ? '' : Array.isArray(v) ? v.join(';') : String(v));

describe('GET /v1/elements?symbols=', () => {
  it('answers the symbols asked for, any case, each once, in the order given, as the single reads do', async () => {
    const { res, body } = await getJson('/v1/elements?symbols=fe,%20Ni,CO,Fe');
    expect(res.status).toBe(200);
    expect(body.count).toBe(3);
    expect(body.elements.map((e: Json) => e.symbol)).toEqual(['Fe', 'Ni', 'Co']);
    for (const e of body.elements) {
      const { body: one } = await getJson(`/v1/elements/${e.symbol}`);
      const { notes: _n, data_version: _d, ...score } = one;
      expect(e).toEqual(score);
    }
    expect((await getJson('/v1/elements')).body.count).toBe(118);
  });

  it('unknown symbols are one 404 unknown_symbol naming them all, with suggestions', async () => {
    const { res, body } = await getJson('/v1/elements?symbols=Fe,Xx,iron,Qq');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(body).toMatchObject({
      code: 'unknown_symbol',
      parameter: 'symbols',
      unknown: ['Xx', 'iron', 'Qq'],
    });
    expect(body.suggestions.find((s: Json) => s.symbol === 'iron').suggestions).toEqual(['Fe']);
    expect((await getJson('/v1/elements?symbols=,,')).res.status).toBe(400);
  });
});

describe('GET /v1/elements/history?symbols=', () => {
  it('gives each symbol the history its own route gives, in one call', async () => {
    const { res, body } = await getJson('/v1/elements/history?symbols=Ni,fe&resolution=yearly', free);
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ resolution: 'yearly', count: 2, data_version: served.ctx.version });
    expect(body.histories.map((h: Json) => h.symbol)).toEqual(['Ni', 'Fe']);
    for (const h of body.histories) {
      const one = (await getJson(`/v1/elements/${h.symbol}/history`, free)).body;
      expect(h.series).toEqual(one.series);
    }
    expect(body.notes.history).toMatch(/contiguous/);
  });

  it('has the access of one history: a key; monthly from Personal', async () => {
    expect((await getJson('/v1/elements/history?symbols=Fe')).res.status).toBe(401);
    const monthly = await getJson('/v1/elements/history?symbols=Fe,Ni&resolution=monthly', free);
    expect(monthly.res.status).toBe(403);
    expect(monthly.body.code).toBe('plan_required');
    expect(
      (await getJson('/v1/elements/history?symbols=Fe,Ni&resolution=monthly', personal)).res.status,
    ).toBe(200);
    const unknown = await getJson('/v1/elements/history?symbols=Fe,Zz', free);
    expect(unknown.res.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'unknown_symbol', unknown: ['Zz'] });
    // At most 20 elements a call (a daily history alone can run to 1.4 MB); duplicates count once.
    const symbols = (await getJson('/v1/elements')).body.elements.map((e: Json) => e.symbol) as string[];
    expect(
      (await getJson(`/v1/elements/history?symbols=${symbols.slice(0, 20)},H,he`, free)).res.status,
    ).toBe(200);
    const many = await getJson(`/v1/elements/history?symbols=${symbols.slice(0, 21)}`, free);
    expect(many.res.status).toBe(400);
    expect(many.body).toMatchObject({ code: 'invalid_parameter', parameter: 'symbols' });
    expect((await getJson(`/v1/elements?symbols=${symbols}`)).body.count).toBe(118);
  });

  it('without a key, the 402 terms price the batch at the per-symbol price times the symbols', async () => {
    for (const [symbols, n] of [
      ['Fe', 1],
      ['Fe,Ni,Co', 3],
      ['Fe,Ni,Co,fe', 3],
    ] as const) {
      const path = `/v1/elements/history?symbols=${symbols}`;
      const res = await fetch(url(path, paying.server.base));
      expect(res.status).toBe(402);
      const price = Math.round(ELEMENT_HISTORY_USD * n * 1e6) / 1e6;
      const body = (await res.json()) as Json;
      expect(body).toMatchObject({ code: 'payment_required', price_usd: price });
      const terms = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
      expect(terms.accepts[0]!.amount).toBe(usdToAtomic(price));
      expect(terms.resource?.url).toBe(url(path, paying.server.base));
    }
    // An unknown symbol is answered before any price is asked.
    const unknown = await fetch(url('/v1/elements/history?symbols=Fe,Zz', paying.server.base));
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('payment-required')).toBeNull();
  });
});

describe('CSV with Accept: text/csv', () => {
  async function csvAndJson(path: string, init: { headers: Record<string, string> }) {
    const json = await getJson(path, init);
    const res = await fetch(url(path), withAccept(init, 'text/csv'));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('vary')).toMatch(/\bAccept\b/);
    expect(json.res.headers.get('vary')).toMatch(/\bAccept\b/);
    expect(res.headers.get('link')).toBe(`<${json.body.canonical_url}>; rel="canonical"`);
    expect(res.headers.get('ri-data-version')).toBe(json.body.data_version);
    return { json: json.body, records: parseCsv(await res.text()), res };
  }

  it.each([['/v1/elements/Fe/history?resolution=monthly'], ['/v1/subjects/topic/T10018/history']])(
    '%s: a header row and one record per period, the JSON values',
    async (path) => {
      const { json, records } = await csvAndJson(path, personal);
      expect(records[0]).toEqual(['period', 'ri', 'ris', 'hri', 'papers']);
      expect(records.slice(1)).toEqual(json.series.map((p: Json) => records[0]!.map((f) => cell(p[f]))));
    },
  );

  it.each([['/v1/elements/Fe/papers?limit=100'], ['/v1/subjects/topic/T10018/papers?sort=newest']])(
    '%s: one record per paper with every JSON field (quoted where needed)',
    async (path) => {
      const { json, records } = await csvAndJson(path, personal);
      const fields = Object.keys(json.papers[0]);
      expect(records[0]).toEqual(fields);
      expect(records.length - 1).toBe(json.papers.length);
      expect(records.slice(1)).toEqual(json.papers.map((p: Json) => fields.map((f) => cell(p[f]))));
    },
  );

  it('batch histories: one record per symbol and period', async () => {
    const { json, records } = await csvAndJson('/v1/elements/history?symbols=Fe,Ni', free);
    expect(records[0]).toEqual(['symbol', 'period', 'ri', 'ris', 'hri', 'papers']);
    const expected = json.histories.flatMap((h: Json) =>
      h.series.map((p: Json) => [
        h.symbol,
        ...['period', 'ri', 'ris', 'hri', 'papers'].map((f) => cell(p[f])),
      ]),
    );
    expect(records.slice(1)).toEqual(expected);
  });

  it('a paper title with a comma or a quote is one field', async () => {
    const { json, records } = await csvAndJson('/v1/elements/O/papers?limit=100', personal);
    const i = json.papers.findIndex((p: Json) => /[,"]/.test(p.title ?? ''));
    expect(i).toBeGreaterThanOrEqual(0);
    expect(records[i + 1]![0]).toBe(json.papers[i].title);
  });

  it('JSON and CSV of one URL are cached apart, each with its own ETag; JSON stays the default', async () => {
    const path = '/v1/elements/Co/history';
    const first = await fetch(url(path), withAccept(free, 'text/csv'));
    const again = await fetch(url(path), withAccept(free, 'text/csv'));
    const json = await fetch(url(path), free);
    const browser = await fetch(url(path), withAccept(free, 'text/html,*/*;q=0.8'));
    const jsonPreferred = await fetch(url(path), withAccept(free, 'application/json, text/csv;q=0.5'));
    expect(await again.text()).toBe(await first.text());
    expect(again.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(again.headers.get('link')).toBe(first.headers.get('link'));
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(json.headers.get('etag')).not.toBe(first.headers.get('etag'));
    for (const r of [json, browser, jsonPreferred]) {
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(((await r.json()) as Json).symbol).toBe('Co');
    }
  });
});

describe('the OpenAPI document', () => {
  it('describes the batch reads and the CSV answers', async () => {
    const doc = (await getJson('/v1/openapi.json')).body;
    const histories = doc.paths['/elements/history'].get;
    expect(histories.parameters.map((p: Json) => p.name)).toEqual(
      expect.arrayContaining(['resolution', 'symbols']),
    );
    expect(doc.paths['/elements'].get.parameters.map((p: Json) => p.name)).toContain('symbols');
    // JSON is the typed answer; CSV its documented alternative (openapi.ts).
    for (const path of [
      '/elements',
      '/elements/history',
      '/elements/{symbol}/history',
      '/elements/{symbol}/papers',
      '/subjects/{subject_type}/{subject_id}/history',
      '/subjects/{subject_type}/{subject_id}/papers',
    ]) {
      const ok = doc.paths[path].get.responses['200'];
      expect([path, Object.keys(ok.content), Object.keys(ok['x-alternative-content'])]).toEqual([
        path,
        ['application/json'],
        ['text/csv'],
      ]);
    }
    await SwaggerParser.validate(structuredClone(doc) as never);
    const priced = (await getJson('/v1/openapi.json', {}, paying.server.base)).body;
    expect(priced.paths['/elements/history'].get['x-payment-info'].price).toMatchObject({
      usd: ELEMENT_HISTORY_USD,
      per: 'symbol',
    });
  });
});

import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, sampleApp } from '../../helpers/app.js';

let ctx: Awaited<ReturnType<typeof sampleApp>>;
let pro: ReturnType<typeof bearer>;
beforeAll(async () => {
  ctx = await sampleApp();
  pro = bearer(ctx.keys.professional);
});
afterAll(() => ctx.close());

type Json = Record<string, unknown>;
const get = async (path: string, init: RequestInit = {}) => {
  const res = await ctx.app.request(path, init);
  const text = await res.text();
  return { res, body: (text ? JSON.parse(text) : null) as Json };
};

describe('element history and papers', () => {
  it('gives yearly history with one point per period', async () => {
    const { res, body } = await get('/v1/elements/ni/history', pro);
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ symbol: 'Ni', resolution: 'yearly', data_version: ctx.version });
    const series = body.series as {
      period: string;
      ri: number;
      ris: number;
      hri: number | null;
      papers: number;
    }[];
    expect(series.length).toBeGreaterThan(3);
    expect(series.map((p) => p.period)).toEqual([...series.map((p) => p.period)].sort());
    expect(series.reduce((s, p) => s + p.papers, 0)).toBeGreaterThan(1000);
    expect((body.notes as Json).history).toMatch(/contiguous/);
  });

  it('sorts papers by impact (default, ris accepted), newest or most cited, and honours limit', async () => {
    const impact = (await get('/v1/elements/Fe/papers?limit=5', pro)).body;
    const ris = (await get('/v1/elements/Fe/papers?limit=5&sort=ris', pro)).body;
    expect(impact.papers).toEqual(ris.papers);
    expect((impact.papers as Json[]).map((p) => p.rank)).toEqual([1, 2, 3, 4, 5]);
    expect(impact).toMatchObject({ sort: 'impact', limit: 5, total_ranked: 100 });
    const newest = (await get('/v1/elements/Fe/papers?sort=newest&limit=100', pro)).body.papers as Json[];
    const dates = newest.map((p) => String(p.publication_date ?? ''));
    expect(dates).toEqual([...dates].sort().reverse());
    const cited = (await get('/v1/elements/Fe/papers?sort=foundational&limit=100', pro)).body
      .papers as Json[];
    const counts = cited.map((p) => (p.citations as number | null) ?? -1);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect((await get('/v1/elements/Fe/papers', pro)).body.papers).toHaveLength(20);
  });

  it('filters element papers by keyword', async () => {
    const all = (await get('/v1/elements/Fe/papers?limit=100', pro)).body.papers as Json[];
    const keyword = all.flatMap((p) => p.keywords as string[])[0]!;
    const filtered = (await get(`/v1/elements/Fe/papers?limit=100&keyword=${keyword}`, pro)).body
      .papers as Json[];
    expect(filtered.length).toBeGreaterThan(0);
    expect(filtered.every((p) => (p.keywords as string[]).includes(keyword))).toBe(true);
  });

  it.each([
    ['/v1/elements/Fe/papers?limit=101', 'limit'],
    ['/v1/elements/Fe/papers?limit=0', 'limit'],
    ['/v1/elements/Fe/papers?sort=best', 'sort'],
    ['/v1/elements/Fe/papers?page=2', 'page'],
    ['/v1/elements/Fe/history?resolution=hourly', 'resolution'],
    ['/v1/elements?format=xml', 'format'],
    ['/v1/subjects/topic/T10030/papers?keyword=x', 'keyword'],
  ])('refuses %s with 400 naming %s', async (path, parameter) => {
    const { res, body } = await get(path, pro);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(body).toMatchObject({ code: 'invalid_parameter', parameter });
  });
});

describe('subjects', () => {
  it('finds topics whatever the case, plurals and word order', async () => {
    const a = (await get('/v1/subjects/search?q=Electrocatalysts%20energy%20conversion', pro)).body;
    const b = (await get('/v1/subjects/search?q=conversion%20ENERGY%20electrocatalyst', pro)).body;
    const top = (x: Json) => (x.results as Json[])[0];
    expect(top(a)).toMatchObject({ subject_type: 'topic', subject_id: 'T10030' });
    expect(top(b)).toMatchObject({ subject_type: 'topic', subject_id: 'T10030' });
    expect(String(top(a)!.match)).toMatch(/name/);
  });

  it.each(['', '%20%20', 'x'.repeat(201)])('refuses an empty or over-long q (%#)', async (q) => {
    const { res, body } = await get(`/v1/subjects/search?q=${q}`, pro);
    expect(res.status).toBe(400);
    expect(body).toMatchObject({ code: 'invalid_parameter', parameter: 'q' });
  });

  it('answers a topic with scores, its history, routed elements and papers', async () => {
    const topic = (await get('/v1/subjects/topic/t10030', pro)).body;
    expect(topic).toMatchObject({
      subject_type: 'topic',
      subject_id: 'T10030',
      name: 'Electrocatalysts for Energy Conversion',
    });
    expect(topic.canonical_url).toBe('https://ri.example/subjects/topic/T10030');
    expect(typeof topic.hri === 'number' || topic.hri === null).toBe(true);
    const monthly = (await get('/v1/subjects/topic/T10030/history?resolution=monthly', pro)).body;
    expect((monthly.series as Json[]).length).toBeGreaterThan(5);
    const elements = (await get('/v1/subjects/topic/T10030/elements', pro)).body.elements as Json[];
    expect(elements.length).toBeLessThanOrEqual(10);
    expect(elements.map((e) => e.symbol)).toContain('Ni');
    const papers = (await get('/v1/subjects/topic/T10030/papers?limit=3', pro)).body;
    expect(papers).toMatchObject({ total_ranked: 100, limit: 3 });
    expect(papers.total_papers as number).toBeGreaterThan(100);
  });

  it('answers an unknown subject with 404 and suggestions, and a topic with no element links with 404', async () => {
    const unknown = await get('/v1/subjects/topic/T1', pro);
    expect(unknown.res.status).toBe(404);
    expect(unknown.body.code).toBe('unknown_subject');
    const keyword = await get('/v1/subjects/keyword/geology/elements', pro);
    if (keyword.res.status === 404)
      expect(keyword.body).toMatchObject({ code: 'unknown_subject', reason: 'no_element_links' });
    // A geology topic: its papers name no element in their titles.
    const search = (await get('/v1/subjects/search?q=sedimentary%20basin', pro)).body.results as Json[];
    const statuses = await Promise.all(
      search
        .filter((r) => r.subject_type === 'topic')
        .map(async (r) => (await get(`/v1/subjects/topic/${r.subject_id}/elements`, pro)).res.status),
    );
    expect(statuses.every((s) => s === 200 || s === 404)).toBe(true);
  });
});

describe('HTTP behaviour', () => {
  it('sets ETag and Cache-Control and answers If-None-Match with 304', async () => {
    const first = await ctx.app.request('/v1/elements/Fe');
    const tag = first.headers.get('etag')!;
    expect(tag).toMatch(/^W\/"/);
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
    const again = await ctx.app.request('/v1/elements/Fe', { headers: { 'if-none-match': tag } });
    expect(again.status).toBe(304);
    const keyed = await ctx.app.request('/v1/elements/Fe', pro);
    expect(keyed.headers.get('etag')).not.toBe(tag);
    expect(keyed.headers.get('cache-control')).toBe('private, max-age=300');
  });

  it('gives a cached answer (and its 304) the same headers as the first one', async () => {
    const names = ['content-type', 'etag', 'cache-control', 'vary', 'access-control-allow-origin'];
    const rateNames = ['ratelimit-policy', 'x-ratelimit-limit'];
    const pick = (res: Response, list: string[]) => list.map((n) => [n, res.headers.get(n)]);
    for (const init of [{ headers: {} }, pro]) {
      const path = '/v1/elements/Co';
      const first = await ctx.app.request(path, { headers: { ...init.headers, 'x-request-id': 'one' } });
      const hit = await ctx.app.request(path, { headers: { ...init.headers, 'x-request-id': 'two' } });
      expect(pick(hit, names)).toEqual(pick(first, names));
      expect(pick(hit, rateNames)).toEqual(pick(first, rateNames));
      expect(hit.headers.get('access-control-expose-headers')).toMatch(/X-Request-Id/);
      expect([first.headers.get('x-request-id'), hit.headers.get('x-request-id')]).toEqual(['one', 'two']);
      // Keyed or not, each answer carries its budget (keyless ones count against the IP).
      expect(hit.headers.has('ratelimit')).toBe(true);
      expect(await hit.text()).toBe(await first.text());
      const etag = first.headers.get('etag')!;
      const fresh = await ctx.app.request(path, { headers: { ...init.headers, 'if-none-match': etag } });
      expect(fresh.status).toBe(304);
      expect(pick(fresh, [...names.slice(1), ...rateNames])).toEqual(
        pick(first, [...names.slice(1), ...rateNames]),
      );
      expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('compresses with br or gzip by Accept-Encoding', async () => {
    const br = await ctx.app.request('/v1/elements', { headers: { 'accept-encoding': 'gzip, br' } });
    expect(br.headers.get('content-encoding')).toBe('br');
    const body = JSON.parse(brotliDecompressSync(Buffer.from(await br.arrayBuffer())).toString()) as Json;
    expect(body.count).toBe(118);
    const gz = await ctx.app.request('/v1/elements', { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect((JSON.parse(gunzipSync(Buffer.from(await gz.arrayBuffer())).toString()) as Json).count).toBe(118);
  });

  it('allows cross-origin GETs and echoes the request id in headers and error bodies', async () => {
    const res = await ctx.app.request('/v1/elements/Xq', {
      headers: { origin: 'https://example.org', 'x-request-id': 'abc-123' },
    });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    expect(((await res.json()) as Json).request_id).toBe('abc-123');
  });
});

describe('OpenAPI', () => {
  it('is a valid OpenAPI 3.0.3 document with the bearer scheme and the public routes open', async () => {
    const doc = (await get('/v1/openapi.json')).body;
    expect(doc.openapi).toBe('3.0.3');
    expect((doc.info as Json).version).toBe('1.0.0');
    await SwaggerParser.validate(structuredClone(doc) as never);
    expect(((doc.components as Json).securitySchemes as Json).bearer).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    expect(doc.security).toEqual([{ bearer: [] }]);
    const paths = doc.paths as Record<string, Record<string, Json>>;
    expect(paths['/elements']!.get!.security).toEqual([{}, { bearer: [] }]);
    expect(paths['/elements/{symbol}']!.get!.security).toEqual([{}, { bearer: [] }]);
    expect(paths['/elements/{symbol}/history']!.get!.security).toEqual([{ bearer: [] }]);
    // A feed takes no header: a closed one its feed token, in its token= parameter.
    expect(paths['/feeds/subjects/{subject_type}/{subject_id}']!.get!.security).toEqual([{}, { bearer: [] }]);
    expect(Object.keys((doc.components as Json).securitySchemes as Json)).toEqual(['bearer']);
    expect(Object.keys(paths).sort()).toEqual(
      [
        '/badges/elements/{symbol}.svg',
        '/badges/elements/{symbol}/history.svg',
        '/badges/subjects/{subject_type}/{subject_id}.svg',
        '/badges/subjects/{subject_type}/{subject_id}/history.svg',
        '/changes',
        '/elements',
        '/elements/history',
        '/elements/{symbol}',
        '/elements/{symbol}/changes',
        '/elements/{symbol}/history',
        '/elements/{symbol}/papers',
        '/exports',
        '/exports/{data_version}/{file}',
        '/feeds/elements/{symbol}',
        '/feeds/rising',
        '/feeds/subjects',
        '/feeds/subjects/{subject_type}/{subject_id}',
        '/lab/quote',
        '/lab/run',
        '/research',
        '/subjects/search',
        '/subjects/{subject_type}/{subject_id}',
        '/subjects/{subject_type}/{subject_id}/changes',
        '/subjects/{subject_type}/{subject_id}/elements',
        '/subjects/{subject_type}/{subject_id}/history',
        '/subjects/{subject_type}/{subject_id}/papers',
        '/versions',
      ].sort(),
    );
    expect(Object.keys(paths['/lab/quote']!)).toEqual(['get', 'post']);
    expect(Object.keys(paths['/lab/run']!.post!.responses as Json)).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '404', '409', '410', '503']),
    );
    expect(Object.keys(paths['/elements/{symbol}/papers']!.get!.responses as Json)).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '404', '429', '503']),
    );
  });

  it('serves the API reference page and its assets without a CDN', async () => {
    const page = await ctx.app.request('/docs');
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/docs/assets/init.js');
    expect(html).not.toMatch(/https?:\/\/(cdn|unpkg|jsdelivr)/);
    const init = await ctx.app.request('/docs/assets/init.js');
    expect(await init.text()).toContain('/v1/openapi.json');
    const js = await ctx.app.request('/docs/assets/swagger-ui-bundle.js');
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(100_000);
  });
});

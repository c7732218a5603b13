import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ri, riBackground, stop } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';

/** Every endpoint and its errors over real HTTP, against a real `ri serve` on the bundled sample. */
let base = '';
let key = '';
let freeKey = '';
let server: ReturnType<typeof riBackground>;

beforeAll(async () => {
  const sample = await sampleDataDir();
  const env = { DATA_DIR: sample.dataDir };
  key = ri(['keys', 'create', '--plan', 'professional'], env).stdout.trim().split('\n').at(-1)!;
  freeKey = ri(['keys', 'create', '--plan', 'free'], env).stdout.trim().split('\n').at(-1)!;
  server = riBackground(['serve', '--port', '0', '--host', '127.0.0.1'], env, /at (http:\/\/\S+)\/v1/);
  base = (await server.started)[1]!;
}, 120_000);
afterAll(async () => {
  expect(await stop(server.child)).toBe(0);
});

const get = async (path: string, k?: string) => {
  const res = await fetch(base + path, k ? { headers: { authorization: `Bearer ${k}` } } : {});
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: (await res.json()) as Record<string, unknown>,
  };
};

describe('every endpoint over real HTTP', () => {
  it.each([
    '/v1/elements',
    '/v1/elements/fe',
    '/v1/elements/Fe/history?resolution=daily',
    '/v1/elements/Fe/papers?sort=newest&limit=5',
    '/v1/subjects/search?q=co2%20reduction%20copper',
    '/v1/subjects/topic/T11784',
    '/v1/subjects/topic/T11784/history?resolution=monthly',
    '/v1/subjects/topic/T11784/elements',
    '/v1/subjects/topic/T11784/papers?sort=foundational',
  ])('GET %s -> 200 with canonical_url, notes, data_version', async (path) => {
    const r = await get(path, key);
    expect(r.status).toBe(200);
    expect(r.body).toHaveProperty('canonical_url');
    expect(r.body).toHaveProperty('notes');
    expect(String(r.body.data_version)).toMatch(/^[0-9a-f]{16}$/);
  });

  it.each([
    ['/v1/elements/Zz', undefined, 404, 'unknown_symbol'],
    ['/v1/subjects/keyword/no-such-keyword-at-all', 'key', 404, 'unknown_subject'],
    ['/v1/elements/Fe/papers?limit=500', 'key', 400, 'invalid_parameter'],
    ['/v1/elements/Fe/history', undefined, 401, 'authentication_required'],
    ['/v1/elements/Fe/history', 'bad', 401, 'invalid_key'],
    ['/v1/subjects/topic/T11784', 'free', 403, 'plan_required'],
    ['/v1/no/such/path', undefined, 404, 'not_found'],
  ])('GET %s (%s key) -> %i %s as problem+json', async (path, who, status, code) => {
    const k = who === 'key' ? key : who === 'free' ? freeKey : who === 'bad' ? `${key}x` : undefined;
    const r = await get(path, k);
    expect(r.status).toBe(status);
    expect(r.type).toBe('application/problem+json');
    expect(r.body.code).toBe(code);
    expect(typeof r.body.request_id).toBe('string');
  });

  it('quotes a lab query and runs the quote (GET by id, POST with the whole quote)', async () => {
    const quote = await get('/v1/lab/quote?q=Ni%20Fe%20year:2024', key);
    expect(quote.status).toBe(200);
    expect(quote.body).toMatchObject({ query: 'Fe Ni year:2024', licence: null });
    const id = String(quote.body.quote_id);
    const run = await get(`/v1/lab/run?quote_id=${id}&depth=papers_20`, key);
    expect(run.status).toBe(200);
    expect((run.body.papers as unknown[]).length).toBe(Math.min(20, Number(quote.body.matches)));
    const posted = await fetch(`${base}/v1/lab/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ quote: { ...quote.body, matches: 1 }, depth: 'papers_20' }),
    });
    expect(posted.status).toBe(400);
    expect(((await posted.json()) as { code: string }).code).toBe('quote_edited');
    const unusable = await get('/v1/lab/quote?q=Ni%20(Fe', key);
    expect(unusable.status).toBe(400);
    expect(unusable.body).toMatchObject({ code: 'unusable_query', position: 3 });
  });

  it('serves the OpenAPI document, the reference page, health, readiness and metrics', async () => {
    expect((await get('/v1/openapi.json')).body.openapi).toBe('3.0.3');
    expect((await fetch(`${base}/docs`)).status).toBe(200);
    expect((await get('/healthz')).body.ok).toBe(true);
    expect((await get('/readyz')).body.ready).toBe(true);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/http_requests_total\{method="GET",route="\/v1\/elements",status="200"\} \d+/);
    expect(metrics).toMatch(/snapshot_info\{data_version="[0-9a-f]{16}"\} 1/);
  });
});

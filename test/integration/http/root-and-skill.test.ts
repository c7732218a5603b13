import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedSample } from '../../helpers/x402.js';

/**
 * The /v1 addresses outside the access table (the API's root, the OpenAPI document, the skill and
 * its version), over real HTTP: their parameters are checked as every route's are, and the
 * OpenAPI document is cached as a read is.
 */
let served: Awaited<ReturnType<typeof servedSample>>;
beforeAll(async () => {
  served = await servedSample();
}, 120_000);
afterAll(async () => served?.close());

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${served.server.base}${path}`, { headers });

/** A data_version that no snapshot has (16 hex digits, as the form wants). */
const NEVER = '0000000000000000';

describe('parameters of the API root, the OpenAPI document and the skill', () => {
  it.each(['/v1', '/v1/openapi.json', '/v1/skill', '/v1/skill/version'])(
    '%s refuses an unknown parameter, naming it',
    async (path) => {
      expect((await get(path)).status).toBe(200);
      const res = await get(`${path}?foo=1`);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toMatchObject({ code: 'invalid_parameter', parameter: 'foo' });
    },
  );

  it.each(['/v1', '/v1/skill', '/v1/skill/version'])(
    '%s takes a data_version pin, as every read: the current one answers, one not kept is 410',
    async (path) => {
      const current = ((await (await get('/v1')).json()) as { data_version: string }).data_version;
      expect((await get(`${path}?data_version=${current}`)).status).toBe(200);
      const gone = await get(`${path}?data_version=${NEVER}`);
      expect(gone.status).toBe(410);
      expect(await gone.json()).toMatchObject({ code: 'data_version_gone', current_version: current });
    },
  );

  it('/v1/openapi.json takes no pin, by parameter or header: 400 naming it, whatever the version', async () => {
    const current = ((await (await get('/v1')).json()) as { data_version: string }).data_version;
    for (const version of [current, NEVER]) {
      const byQuery = await get(`/v1/openapi.json?data_version=${version}`);
      expect(byQuery.status).toBe(400);
      expect(await byQuery.json()).toMatchObject({ code: 'invalid_parameter', parameter: 'data_version' });
      const byHeader = await get('/v1/openapi.json', { 'RI-Data-Version': version });
      expect(byHeader.status).toBe(400);
      expect(await byHeader.json()).toMatchObject({
        code: 'invalid_parameter',
        parameter: 'RI-Data-Version',
      });
    }
  });
});

describe('the API root and the skill version carry what every answer carries', () => {
  it('/v1: canonical_url (a page that answers), notes on each metric, data_version', async () => {
    // The version served, as an answer of the access table names it.
    const version = ((await (await get('/v1/elements/Fe')).json()) as { data_version: string }).data_version;
    const keyed = { authorization: `Bearer ${served.ctx.keys.personal}` };
    for (const headers of [{}, keyed]) {
      const res = await get('/v1', headers);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body.data_version).toBe(version);
      const notes = body.notes as Record<string, unknown>;
      for (const metric of ['ri', 'ris', 'hri', 'data', 'cite'])
        expect(typeof notes[metric] === 'string' && (notes[metric] as string).length > 0, metric).toBe(true);
      const canonical = body.canonical_url as string;
      expect(canonical.startsWith(`${served.server.base}/`)).toBe(true);
      expect((await fetch(canonical)).status).toBe(200);
    }
  });

  it('/v1/skill/version: the version and where to get it, a canonical_url and notes on the version alone', async () => {
    const base = served.server.base;
    const keyed = { authorization: `Bearer ${served.ctx.keys.personal}` };
    for (const headers of [{}, keyed]) {
      const res = await get('/v1/skill/version', headers);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Record<string, unknown>;
      // Nothing about the data served: its notes and data_version belong to the data's answers.
      expect(Object.keys(body).sort()).toEqual(
        ['canonical_url', 'name', 'notes', 'skill_md_url', 'version', 'zip_url'].sort(),
      );
      expect(Object.keys(body.notes as object)).toEqual(['version']);
      expect((body.notes as { version: string }).version).toMatch(/newer/);
      expect(body.canonical_url).toBe(`${base}/skill.md`);
      for (const url of [body.canonical_url, body.zip_url, body.skill_md_url] as string[])
        expect([url, (await fetch(url)).status]).toEqual([url, 200]);
    }
  });

  it('keeps the fields each had', async () => {
    const root = (await (await get('/v1')).json()) as Record<string, string>;
    const base = served.server.base;
    expect(root).toMatchObject({
      name: 'Research-Intensity API',
      openapi_url: `${base}/v1/openapi.json`,
      docs_url: `${base}/docs`,
      skill_url: `${base}/v1/skill`,
    });
    const skill = (await (await get('/v1/skill/version')).json()) as Record<string, string>;
    expect(skill).toMatchObject({ name: 'research-intensity', zip_url: `${base}/v1/skill` });
    expect(skill.version).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('/v1/openapi.json is cached as any read', () => {
  // As sent: fetch asks for gzip unless told otherwise.
  const getDoc = (headers: Record<string, string> = {}) =>
    get('/v1/openapi.json', { 'accept-encoding': 'identity', ...headers });

  it('carries an ETag and Cache-Control, and answers 304 to an If-None-Match that names it', async () => {
    const first = await getDoc();
    const body = await first.text();
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"[\w-]+"$/);
    expect(first.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
    // The same document, the same validator.
    const again = await getDoc();
    expect([again.headers.get('etag'), await again.text()]).toEqual([etag, body]);

    const fresh = await getDoc({ 'if-none-match': etag });
    expect(fresh.status).toBe(304);
    expect(await fresh.text()).toBe('');
    expect(fresh.headers.get('etag')).toBe(etag);
    expect(fresh.headers.get('cache-control')).toBe(first.headers.get('cache-control'));
    // Among others, and by weak comparison.
    expect((await getDoc({ 'if-none-match': `"other", ${etag.slice(2)}` })).status).toBe(304);
    const stale = await getDoc({ 'if-none-match': 'W/"other"' });
    expect(stale.status).toBe(200);
    expect(await stale.text()).toBe(body);
  });

  it('gives each encoding its own ETag, and a 304 only for the representation asked for', async () => {
    const identity = (await getDoc()).headers.get('etag')!;
    for (const encoding of ['br', 'gzip']) {
      const res = await getDoc({ 'accept-encoding': encoding });
      await res.arrayBuffer();
      expect(res.headers.get('content-encoding')).toBe(encoding);
      const etag = res.headers.get('etag')!;
      expect(etag).not.toBe(identity);
      const fresh = await getDoc({ 'accept-encoding': encoding, 'if-none-match': etag });
      expect([encoding, fresh.status, fresh.headers.get('etag')]).toEqual([encoding, 304, etag]);
      // The identity form's validator does not stand for the encoded form.
      const other = await getDoc({ 'accept-encoding': encoding, 'if-none-match': identity });
      await other.arrayBuffer();
      expect([encoding, other.status]).toEqual([encoding, 200]);
    }
  });
});

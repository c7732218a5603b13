import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedSample } from '../../helpers/x402.js';

/**
 * The /v1 addresses outside the access table (the API's root, the OpenAPI document, the skill and
 * its version), over real HTTP: their parameters are checked as every route's are.
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

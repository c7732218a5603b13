import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleApp } from '../../helpers/app.js';

/**
 * Which requests pass the /v1 steps (snapshot, caller, rate limit, cache): /v1 and every path
 * under it, but GET and HEAD /v1/openapi.json, answered before them (no caller, no count).
 */
let ctx: Awaited<ReturnType<typeof sampleApp>>;
beforeAll(async () => {
  ctx = await sampleApp();
});
afterAll(async () => ctx?.close());

const badKey = { authorization: 'Bearer ri_abcdefgh_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' };

describe('the /v1 steps', () => {
  it.each(['GET', 'HEAD'])(
    'are not passed by %s /v1/openapi.json: a bad key is not looked at, nothing counted',
    async (method) => {
      const res = await ctx.app.request('/v1/openapi.json', { method, headers: badKey });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toBeNull();
      expect(res.headers.get('x-request-id')).toBeTruthy();
    },
  );

  it.each([
    ['GET', '/v1'],
    ['GET', '/v1/'],
    ['GET', '/v1/no-such-thing'],
    ['POST', '/v1/openapi.json'],
    ['GET', '/v1/elements/Fe'],
  ])('are passed by %s %s: a bad key is refused', async (method, path) => {
    const res = await ctx.app.request(path, { method, headers: badKey });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('invalid_key');
  });

  it.each(['/v1', '/v1/no-such-thing', '/v1/elements/Fe'])('count %s against the caller', async (path) => {
    const res = await ctx.app.request(path);
    expect(res.headers.get('ratelimit')).toMatch(/^"per-ip";r=\d+;t=\d+$/);
  });

  it('are not passed by pages and other paths', async () => {
    for (const path of ['/healthz', '/v1x', '/docs']) {
      const res = await ctx.app.request(path, { headers: badKey });
      expect(res.status, path).not.toBe(401);
      expect(res.headers.get('ratelimit'), path).toBeNull();
    }
  });
});

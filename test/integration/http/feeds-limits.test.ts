import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleApp } from '../../helpers/app.js';

/** The feeds under the rate limits every /v1 read has: per feed token, and per address without one. */
let ctx: Awaited<ReturnType<typeof sampleApp>>;
beforeAll(async () => {
  ctx = await sampleApp({ RATE_LIMIT_PER_KEY: 3, RATE_LIMIT_PER_IP: 3 });
});
afterAll(() => ctx.close());

describe('rate limits on the feeds', () => {
  it("counts a feed token's requests in its own bucket, at its plan's budget, then 429", async () => {
    const account = await ctx.state.createAccount({ email: 'limits@example.org', plan: 'personal' });
    const { token, prefix } = await ctx.state.createFeedToken(account.id);
    const other = await ctx.state.createFeedToken(account.id);
    const path = (t: string) => `/v1/feeds/subjects/topic/T10030?token=${t}`;
    for (let i = 0; i < 3; i++) {
      const res = await ctx.app.request(path(token));
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('"per-key";q=3;w=60');
    }
    const refused = await ctx.app.request(path(token));
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { code: string; limit_scope: string; detail: string };
    expect(body).toMatchObject({ code: 'rate_limited', limit_scope: 'per-key' });
    expect(body.detail).toContain(`feed token 'rif_${prefix}_…'`);
    expect(body.detail).not.toContain(token);
    // Another token has its own budget; a feed without a token counts against the address.
    expect((await ctx.app.request(path(other.token))).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await ctx.app.request('/v1/feeds/elements/Fe')).status).toBe(200);
    const open = await ctx.app.request('/v1/feeds/elements/Fe');
    expect([open.status, ((await open.json()) as { limit_scope: string }).limit_scope]).toEqual([
      429,
      'per-ip',
    ]);
  });
});

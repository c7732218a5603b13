import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleApp } from '../../helpers/app.js';
import { checkedRequests } from '../../helpers/contract.js';

// The contract check every sampleApp test runs through (test/helpers/contract.ts) must be able to
// fail: an answer that does not match its operation's schema, or a 200 from an undocumented path.

let ctx: Awaited<ReturnType<typeof sampleApp>>;
beforeAll(async () => {
  ctx = await sampleApp();
});
afterAll(() => ctx.close());

describe('the contract check of HTTP tests', () => {
  it('passes answers that match, and throws on a body that does not or a path not documented', async () => {
    expect((await ctx.app.request('/v1/elements/Fe')).status).toBe(200);
    const openapi = await (await ctx.app.request('/v1/openapi.json')).text();
    const fake = checkedRequests(new Hono());
    fake.get('/v1/openapi.json', (c) => c.body(openapi, 200, { 'content-type': 'application/json' }));
    fake.get('/v1/elements/:symbol', (c) => c.json({ symbol: 'Fe', ri: 'not a number' }));
    fake.get('/v1/nowhere', (c) => c.json({}));
    await expect(fake.request('/v1/elements/Fe')).rejects.toThrow(
      /does not match the GET \/elements\/\{symbol\}/,
    );
    await expect(fake.request('/v1/nowhere')).rejects.toThrow(/not in the OpenAPI document/);
  });
});

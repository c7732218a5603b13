import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../../helpers/app.js';
import { toolError, toolTerms } from '../../helpers/mcp.js';
import { PAID_CONFIG, servedSample } from '../../helpers/x402.js';

/**
 * Integer parameters (limit, page_size, page) are one schema for REST, MCP and the price of a
 * call: plain decimal digits from a query string, JSON integers in a tool call. What Number()
 * would also read (hex, binary, exponents, padding, a sign) is refused, and a value out of range
 * is refused naming the parameter's own bounds.
 */
let served: Awaited<ReturnType<typeof servedSample>>;
beforeAll(async () => {
  served = await servedSample(PAID_CONFIG);
}, 60_000);
afterAll(() => served?.close());

type Json = Record<string, unknown>;
async function get(path: string, key?: string) {
  const res = await fetch(`${served.server.base}${path}`, key ? bearer(key) : {});
  return { res, body: (await res.json()) as Json };
}

const NOT_DECIMAL = ['0x10', '1e1', '%2010', '10%20', '0b11', '+5', '-0', '1.0', ''];

describe('integer query parameters', () => {
  it.each([
    ['/v1/elements/Ni/papers', 'limit', 1, 100],
    ['/v1/subjects/topic/T10030/papers', 'limit', 1, 100],
    ['/v1/research?q=iron', 'page_size', 1, 10],
    ['/v1/research?q=iron', 'page', 1, 5],
  ])('%s %s: decimal digits only, the bounds named when out of range', async (path, name, min, max) => {
    const url = (v: string) => `${path}${path.includes('?') ? '&' : '?'}${name}=${v}`;
    const personal = served.ctx.keys.personal;
    // Given twice (5&name=6) is no number either.
    const refused = [...NOT_DECIMAL, `5&${name}=6`, String(min - 1), String(max + 1), '99999999999999999999'];
    for (const v of refused) {
      const { res, body } = await get(url(v), personal);
      expect([v, res.status, body.code, body.parameter]).toEqual([v, 400, 'invalid_parameter', name]);
      expect(body.detail).toContain(`from ${min} to ${max}`);
      expect(body.detail).not.toContain('9007199254740991');
    }
    const { res, body } = await get(url(`00${min}`), personal);
    expect(res.status).toBe(200);
    if (name !== 'page') expect(body[name]).toBe(min);
  });

  it('prices only what parses: a refused limit is 400 without terms, a good one 402 with them', async () => {
    for (const v of ['0x10', '1e1', '99999999999999999999']) {
      const { res, body } = await get(`/v1/elements/Ni/papers?limit=${v}`);
      expect([v, res.status, body.code]).toEqual([v, 400, 'invalid_parameter']);
      expect(res.headers.get('payment-required')).toBeNull();
    }
    const good = await get('/v1/elements/Ni/papers?limit=16');
    expect(good.res.status).toBe(402);
    expect(good.res.headers.get('payment-required')).not.toBeNull();
  });

  it('MCP takes JSON numbers (and digits), refuses the rest naming the bounds, and prices the same', async () => {
    const connect = async (key?: string) => {
      const client = new Client({ name: 'ri-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${served.server.base}/mcp`), {
          requestInit: key ? { headers: { authorization: `Bearer ${key}` } } : {},
        }),
      );
      const { tools } = await client.listTools();
      return { client, tools };
    };
    const { client, tools } = await connect(served.ctx.keys.personal);
    const { client: anon } = await connect();
    try {
      const call = async (c: Client, name: string, args: Json) =>
        (await c.callTool({ name, arguments: args })) as CallToolResult;
      // Listed as integers with their bounds, as the OpenAPI document lists the query parameters.
      const listed = tools.find((t) => t.name === 'get_element_papers')!.inputSchema.properties!;
      expect(listed.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 });
      const research = tools.find((t) => t.name === 'research')!.inputSchema.properties!;
      expect(research.page_size).toMatchObject({ type: 'integer', minimum: 1, maximum: 10 });

      const papers = await call(client, 'get_element_papers', { symbol: 'Ni', limit: 3 });
      expect((papers.structuredContent as { papers: unknown[] }).papers).toHaveLength(3);
      const page = await call(client, 'research', { q: 'nickel iron', page_size: 2, page: 1 });
      expect(page.structuredContent).toMatchObject({ page: 1, page_size: 2 });
      for (const limit of ['0x10', '1e1', 2.5, 0, 101, 1e20]) {
        const r = await call(client, 'get_element_papers', { symbol: 'Ni', limit });
        expect(toolError(r)).toMatchObject({ code: 'invalid_parameter', parameter: 'limit' });
        expect(toolError(r)!.detail).toContain('from 1 to 100');
      }
      // The price reads the same parse: digits as text are that many papers, anything else no price.
      const asText = toolTerms(await call(anon, 'get_element_papers', { symbol: 'Ni', limit: '50' }));
      const asNumber = toolTerms(await call(anon, 'get_element_papers', { symbol: 'Ni', limit: 50 }));
      expect(asText.accepts[0]!.amount).toBe(asNumber.accepts[0]!.amount);
      const hex = await call(anon, 'get_element_papers', { symbol: 'Ni', limit: '0x10' });
      expect(toolError(hex)).toMatchObject({ code: 'invalid_parameter', parameter: 'limit' });
    } finally {
      await client.close();
      await anon.close();
    }
  });
});

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { riServeWithKey, stop } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

type Result = {
  isError?: boolean;
  content: { type: string; text: string }[];
  structuredContent: Record<string, unknown>;
};

/**
 * The MCP SDK's second generation client (@modelcontextprotocol/client 2.x, the one MCP Inspector
 * 2.x is built on), as an agent uses it against a real `ri serve` that takes x402: the tools first,
 * then a keyed call, a mistake, an unpaid priced call and the notes resource.
 */
describe('@modelcontextprotocol/client 2.x against a real ri serve', () => {
  it('lists the tools, answers a keyed call, an error and an unpaid call as the client can read them', async () => {
    const { dataDir } = await sampleDataDir();
    const env = {
      STATE_URL: `sqlite:${tempDir('ri-mcp2-state-')}/state.sqlite`,
      X402_NETWORKS: 'base',
      X402_PAY_TO_EVM: `0x${'1'.repeat(40)}`,
    };
    const server = await riServeWithKey(dataDir, 'personal', env);
    const { base, key } = server;
    const connect = async (headers: Record<string, string>) => {
      const client = new Client({ name: 'ri-test-v2', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }),
      );
      return client;
    };
    const keyed = await connect({ authorization: `Bearer ${key}` });
    const anon = await connect({});
    try {
      expect((await keyed.listTools()).tools).toHaveLength(15);
      expect((await anon.listTools()).tools).toHaveLength(15);
      const papers = (await keyed.callTool({
        name: 'get_element_papers',
        arguments: { symbol: 'Fe', limit: 3 },
      })) as unknown as Result;
      expect(papers.isError ?? false).toBe(false);
      expect((papers.structuredContent.papers as unknown[]).length).toBe(3);
      expect(papers.content[0]!.text).toMatch(/^papers\[3\|\]\{title\|doi\|/m);
      const mistake = (await keyed.callTool({
        name: 'get_element_ri',
        arguments: { symbol: 'Xx' },
      })) as unknown as Result;
      expect(mistake.isError).toBe(true);
      expect(JSON.parse(mistake.content[0]!.text)).toMatchObject({
        code: 'unknown_symbol',
        suggestions: ['Xe'],
      });
      const unpaid = (await anon.callTool({
        name: 'get_element_papers',
        arguments: { symbol: 'Fe' },
      })) as unknown as Result;
      expect(unpaid.isError).toBe(true);
      expect(JSON.parse(unpaid.content[0]!.text)).toMatchObject({
        'x402/error': {
          code: 402,
          data: { x402Version: 2, accepts: [{ network: 'eip155:8453', amount: '20000' }] },
        },
      });
      const notes = (papers.structuredContent.notes as { read: string }).read;
      const { contents } = await keyed.readResource({ uri: notes });
      expect(JSON.parse((contents[0] as { text: string }).text).notes.papers).toMatch(/ris_contribution/);
    } finally {
      await keyed.close();
      await anon.close();
      await stop(server.child);
    }
    // A build and a server: on a busy 2-core machine this alone takes half a minute.
  }, 180_000);
});

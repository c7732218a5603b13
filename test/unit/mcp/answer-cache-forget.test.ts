import { describe, expect, it } from 'vitest';
import { McpAnswerCache } from '../../../src/mcp/answer-cache.js';

/** The MCP answer cache is one for all versions: a version set aside must leave nothing in it. */
describe('McpAnswerCache: the answers of a version set aside', () => {
  const cache = () => new McpAnswerCache(new Map(), 'full');
  const from = (version: string, isSetAside = false) => ({ version, isSetAside });
  const text = (answer: { body: Buffer } | null) => answer?.body.toString() ?? null;

  it('are all dropped by forget(version), whatever key they were kept under; the others stay', () => {
    const answers = cache();
    // Keys carry the version current when asked: a read pinned to an older one is kept under the newer.
    answers.keepResult('plan\0new\0get_element_ri\0{"symbol":"Fe"}', '{"v":"new"}', from('new'));
    answers.keepResult('plan\0new\0get_element_ri\0{"data_version":"old"}', '{"v":"old"}', from('old'));
    answers.keepResult('plan\0old\0get_element_ri\0{"symbol":"Fe"}', '{"v":"old"}', from('old'));
    answers.forget('old');
    expect(text(answers.answer('plan\0new\0get_element_ri\0{"data_version":"old"}', 1, false))).toBeNull();
    expect(text(answers.answer('plan\0old\0get_element_ri\0{"symbol":"Fe"}', 1, false))).toBeNull();
    expect(text(answers.answer('plan\0new\0get_element_ri\0{"symbol":"Fe"}', 1, false))).toContain(
      '"v":"new"',
    );
  });

  it('are not kept when the snapshot was set aside between the answer and its keeping', async () => {
    const answers = cache();
    answers.keepResult('a', '{"v":1}', from('old', true));
    expect(answers.answer('a', 1, false)).toBeNull();
    const sdk = new Response(JSON.stringify({ result: { v: 2 }, jsonrpc: '2.0', id: 1 }), {
      headers: { 'content-type': 'application/json' },
    });
    expect((await answers.keep('b', sdk, from('old', true))).status).toBe(200);
    expect(answers.answer('b', 1, false)).toBeNull();
  });
});

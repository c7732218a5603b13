import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedSample } from '../../helpers/x402.js';

/**
 * Server-Timing as the W3C grammar has it: metrics separated by commas, each a token with
 * `;dur=<number>` and `;desc=<token or quoted string>` parameters. Returns name -> params.
 */
function parseServerTiming(header: string | null): Map<string, { dur?: number; desc?: string }> {
  expect(header, 'Server-Timing header').not.toBeNull();
  const metrics = new Map<string, { dur?: number; desc?: string }>();
  for (const metric of header!.split(',')) {
    const [name, ...params] = metric.trim().split(';');
    expect(name).toMatch(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/);
    const entry: { dur?: number; desc?: string } = {};
    for (const p of params) {
      const m = /^(dur|desc)=(.+)$/.exec(p.trim());
      expect(m, `parameter ${p} of ${header}`).not.toBeNull();
      if (m![1] === 'dur') {
        expect(m![2]).toMatch(/^\d+(\.\d+)?$/);
        entry.dur = Number(m![2]);
      } else entry.desc = m![2]!;
    }
    metrics.set(name!, entry);
  }
  return metrics;
}

let served: Awaited<ReturnType<typeof servedSample>>;
let base: string;
beforeAll(async () => {
  served = await servedSample();
  base = served.server.base;
}, 120_000);
afterAll(() => served?.close());

describe('Server-Timing', () => {
  it("says cache hit for a cached answer and the core's share for one that is not", async () => {
    const miss = await fetch(`${base}/v1/elements/Mo`);
    expect(miss.status).toBe(200);
    const m = parseServerTiming(miss.headers.get('server-timing'));
    expect([...m.keys()]).toEqual(['core', 'total']);
    expect(m.get('core')!.dur!).toBeLessThanOrEqual(m.get('total')!.dur!);

    for (const headers of [{}, { 'accept-encoding': 'gzip, deflate, br' }] as Record<string, string>[]) {
      const hit = await fetch(`${base}/v1/elements/Mo`, { headers });
      const h = parseServerTiming(hit.headers.get('server-timing'));
      expect([...h.keys()]).toEqual(['cache', 'total']);
      expect(h.get('cache')!.desc).toBe('hit');
      expect(h.get('total')!.dur).toBeGreaterThanOrEqual(0);
      // And its 304.
      const fresh = await fetch(`${base}/v1/elements/Mo`, {
        headers: { ...headers, 'if-none-match': hit.headers.get('etag')! },
      });
      expect(fresh.status).toBe(304);
      expect([...parseServerTiming(fresh.headers.get('server-timing')).keys()]).toEqual(['cache', 'total']);
    }
  });

  it('is on keyed answers, errors, pages and the other endpoints', async () => {
    const key = served.ctx.keys.personal;
    const cases: [string, RequestInit, number][] = [
      ['/v1/elements/Mo', { headers: { authorization: `Bearer ${key}` } }, 200],
      ['/v1/elements/Xq', {}, 404],
      ['/v1/elements/Fe', { headers: { authorization: 'Bearer ri_bad_key' } }, 401],
      ['/v1/subjects/search?q=catalysis', {}, 401],
      ['/v1/nowhere', {}, 404],
      ['/', {}, 200],
      ['/elements/Fe', { headers: { 'accept-encoding': 'br' } }, 200],
      ['/healthz', {}, 200],
      ['/v1/openapi.json', {}, 200],
      ['/mcp', {}, 405],
    ];
    for (const [path, init, status] of cases) {
      const res = await fetch(base + path, init);
      expect(res.status, path).toBe(status);
      const timing = parseServerTiming(res.headers.get('server-timing'));
      expect(timing.get('total')?.dur, path).toBeGreaterThanOrEqual(0);
      expect(timing.get('cache'), path).toBeUndefined();
      const core = timing.get('core')?.dur;
      if (core !== undefined) expect(core).toBeLessThanOrEqual(timing.get('total')!.dur!);
      await res.arrayBuffer();
    }
  });
});

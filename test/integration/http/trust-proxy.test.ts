import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riBackground, stop } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';

/**
 * Over real HTTP to `ri serve` with TRUST_PROXY=127.0.0.1/32: connections from 127.0.0.1 are the
 * proxy; connections from 127.0.0.2 (also loopback on Linux) are a client that is not.
 */
describe('ri serve behind a proxy named by its address', () => {
  let server: ReturnType<typeof riBackground>;
  let port: number;

  beforeAll(async () => {
    const sample = await sampleDataDir();
    server = riBackground(
      ['serve', '--port', '0', '--host', '127.0.0.1'],
      { DATA_DIR: sample.dataDir, TRUST_PROXY: '127.0.0.1/32, ::1/128', RATE_LIMIT_PER_IP: '4' },
      /at (http:\/\/\S+)\/v1/,
    );
    port = Number(new URL((await server.started)[1]!).port);
  }, 120_000);

  afterAll(async () => {
    if (server) await stop(server.child);
  });

  const get = (from: string, xff: string) =>
    new Promise<{ status: number; policy: string | undefined }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/v1/elements/Fe',
          localAddress: from,
          agent: false,
          headers: { 'x-forwarded-for': xff },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              policy: res.headers['ratelimit-policy'] as string | undefined,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });

  it('a forged left-most X-Forwarded-For never buys a new budget', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++)
      statuses.push((await get('127.0.0.1', `203.0.113.${i}, 198.51.100.7`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
    // The proxy's own entry is honoured: another client behind it has its own budget.
    const other = await get('127.0.0.1', '203.0.113.1, 198.51.100.8');
    expect(other.status).toBe(200);
    expect(other.policy).toBe('"per-ip";q=4;w=60');
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await get('127.0.0.2', `198.51.100.${100 + i}`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
  });
});

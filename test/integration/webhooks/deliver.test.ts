import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverWebhook } from '../../../src/webhooks/deliver.js';
import { generateWebhookSecret } from '../../../src/webhooks/signature.js';
import type { Resolver } from '../../../src/webhooks/url-check.js';
import { verified, webhookReceiver } from '../../helpers/webhook-receiver.js';

/**
 * One delivery attempt against a receiver on loopback: the address connected to is the one the
 * check resolved (a name no system resolver knows still reaches it), a name that resolves to a
 * private address at send time is refused before any connection, a redirect and a large answer
 * are handled as the rules say.
 */
let receiver: Awaited<ReturnType<typeof webhookReceiver>>;
const secret = generateWebhookSecret();
const message = { id: 'msg_0123456789abcdef0123456789abcdef', body: '{"type":"webhook.test","data":{}}' };
const to =
  (address: string): Resolver =>
  async () => [{ address, family: 4 }];

beforeAll(async () => {
  receiver = await webhookReceiver({ '/moved': () => ({ redirect: '/ok' }), '/error': () => 503 });
});
afterAll(async () => {
  await receiver?.close();
});

describe('a delivery attempt', () => {
  it('connects to the address the check resolved, and signs what it sends', async () => {
    const port = new URL(receiver.base).port;
    const result = await deliverWebhook({ url: `http://hooks.invalid:${port}/ok`, secret }, message, {
      allowLoopback: true,
      timeoutMs: 2000,
      resolve: to('127.0.0.1'),
    });
    expect(result).toEqual({ ok: true, status: 200, error: null });
    const got = receiver.at('/ok');
    expect(got).toHaveLength(1);
    expect(got[0]!.id).toBe(message.id);
    expect(got[0]!.headers['content-type']).toBe('application/json');
    expect(verified(secret, got[0]!).type).toBe('webhook.test');
  });

  it('refuses a name that now resolves to a private address, before connecting', async () => {
    const before = receiver.received.length;
    const result = await deliverWebhook({ url: 'https://hooks.invalid/ok', secret }, message, {
      allowLoopback: true,
      timeoutMs: 2000,
      resolve: to('10.0.0.8'),
    });
    expect(result.ok).toBe(false);
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/resolves to 10\.0\.0\.8, a private/);
    expect(receiver.received.length).toBe(before);
  });

  it('refuses loopback when not allowed, and plain http to a public address', async () => {
    expect(
      (
        await deliverWebhook({ url: `${receiver.base}/ok`, secret }, message, {
          allowLoopback: false,
          timeoutMs: 500,
        })
      ).error,
    ).toMatch(/https only/);
    expect(
      (
        await deliverWebhook({ url: 'http://93.184.215.14/', secret }, message, {
          allowLoopback: true,
          timeoutMs: 500,
        })
      ).error,
    ).toMatch(/loopback addresses only/);
  });

  it('does not follow a redirect, and says a non-2xx answer', async () => {
    const before = receiver.at('/ok').length;
    const moved = await deliverWebhook({ url: `${receiver.base}/moved`, secret }, message, {
      allowLoopback: true,
      timeoutMs: 2000,
    });
    expect(moved).toEqual({
      ok: false,
      status: 302,
      error: expect.stringMatching(/redirect \(HTTP 302\) not followed/),
    });
    expect(receiver.at('/ok').length).toBe(before);
    expect(
      await deliverWebhook({ url: `${receiver.base}/error`, secret }, message, {
        allowLoopback: true,
        timeoutMs: 2000,
      }),
    ).toEqual({ ok: false, status: 503, error: 'HTTP 503' });
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const slow = await webhookReceiver({ '/': () => 'hang' });
    const started = Date.now();
    const result = await deliverWebhook({ url: `${slow.base}/`, secret }, message, {
      allowLoopback: true,
      timeoutMs: 300,
    });
    expect(result).toEqual({ ok: false, status: null, error: 'no answer within 300 ms' });
    expect(Date.now() - started).toBeLessThan(2000);
    await slow.close();
  });

  it('reads at most 64 KiB of an answer: an endless one still counts by its status', async () => {
    const endless = createServer((_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 120);
      const more = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', more);
      };
      more();
    });
    await new Promise<void>((r) => endless.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}/`;
    const result = await deliverWebhook({ url, secret }, message, { allowLoopback: true, timeoutMs: 5000 });
    expect(result).toEqual({ ok: true, status: 200, error: null });
    endless.closeAllConnections();
    await new Promise((r) => endless.close(r));
  });

  it('counts a host lookup that does not end against the same deadline', async () => {
    const never: Resolver = () => new Promise(() => undefined);
    const started = Date.now();
    const result = await deliverWebhook({ url: 'https://hooks.invalid/', secret }, message, {
      allowLoopback: false,
      timeoutMs: 300,
      resolve: never,
    });
    expect(result).toEqual({
      ok: false,
      status: null,
      error: 'no answer within 300 ms (looking up the host)',
    });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

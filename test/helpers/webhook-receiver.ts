import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** A request the receiver got. */
export interface Received {
  path: string;
  id: string;
  headers: Record<string, string>;
  body: string;
}

/** How the receiver answers the n-th request (0-based) to a path: a status, a redirect, or never. */
export type Answer = number | { redirect: string } | 'hang';

/**
 * A webhook receiver on loopback: records every request and answers each path as `answers`
 * says (200 unless told). Requests left hanging are cut when it closes.
 */
export async function webhookReceiver(answers: Record<string, (n: number) => Answer> = {}) {
  const received: Received[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const n = received.filter((r) => r.path === path).length;
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => k.startsWith('webhook-') || k === 'content-type'),
      ) as Record<string, string>;
      received.push({
        path,
        id: headers['webhook-id'] ?? '',
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const answer = answers[path]?.(n) ?? 200;
      if (answer === 'hang') return;
      if (typeof answer === 'object') {
        res.writeHead(302, { location: answer.redirect }).end();
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer < 300 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    at: (path: string) => received.filter((r) => r.path === path),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A delivery checked with the Standard Webhooks reference library; its parsed body. */
export function verified(secret: string, r: Received): { type: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(r.body, r.headers) as { type: string; data: Record<string, unknown> };
}

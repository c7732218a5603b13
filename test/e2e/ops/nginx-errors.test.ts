import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/works.js';
import { freePort } from '../../helpers/x402.js';
import { findNginx, type NginxProcess, startNginx } from './nginx.js';

// deploy/nginx.conf answers what nginx itself refuses (no replica left, the per-client connection
// cap, a body or headers too large) as problem+json with the service's codes, never HTML. The
// replicas here are a stand-in that answers /healthz and holds everything else: what is checked
// is nginx's own answers, with the deployment file as shipped (only ports and paths changed).

const NGINX = findNginx();
const cleanup: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});

interface Answer {
  status: number;
  type: string | undefined;
  body: string;
}

function send(
  base: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: Buffer } = {},
) {
  return new Promise<Answer>((ok, fail) => {
    const req = request(
      `${base}${path}`,
      { method: init.method ?? 'GET', headers: init.headers ?? {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          ok({
            status: res.statusCode ?? 0,
            type: res.headers['content-type'],
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on('error', fail);
    req.end(init.body);
  });
}

/** A problem answer as the app gives them: problem+json, a catalogued code and its status, a type at /docs/errors. */
function expectProblem(a: Answer, status: number, code: string) {
  expect(a.status).toBe(status);
  expect(a.type).toBe('application/problem+json');
  const body = JSON.parse(a.body) as { type: string; status: number; code: string; title: string };
  expect(body.code).toBe(code);
  expect(body.status).toBe(status);
  const catalogued = ERROR_CODES.find((e) => e.code === code);
  expect(catalogued?.status).toBe(status);
  expect(body.title).toBe(catalogued?.title);
  expect(body.type).toBe(`/docs/errors#${code}`);
}

describe("nginx's own answers (deploy/nginx.conf)", () => {
  it.skipIf(!NGINX)(
    'are problem+json with catalogued codes: the connection cap, a body or headers too large, no replica left',
    async () => {
      const held: ServerResponse[] = [];
      const replica = createServer((req: IncomingMessage, res: ServerResponse) => {
        if (req.url === '/healthz') {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
          return;
        }
        held.push(res); // answered only when the test lets go
      });
      const [portA, portB, portN] = [await freePort(), await freePort(), await freePort()];
      await new Promise<void>((r) => replica.listen(portA, '127.0.0.1', () => r()));
      const nginx: NginxProcess = await startNginx(NGINX!, {
        listen: portN,
        upstreams: [portA, portB],
        dir: tempDir('ri-nginx-errors-'),
      });
      cleanup.push(() => nginx.stop());
      cleanup.push(() => new Promise((r) => replica.close(() => r(undefined))));

      // 256 requests in flight from one address: the 257th is refused by limit_conn.
      const inFlight = Array.from({ length: 256 }, () => send(nginx.base, '/v1/research?q=held'));
      for (let i = 0; held.length < 256 && i < 200; i++) await new Promise((r) => setTimeout(r, 50));
      expect(held.length).toBe(256);
      expectProblem(await send(nginx.base, '/v1/elements'), 429, 'rate_limited');
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      expect((await Promise.all(inFlight)).every((a) => a.status === 200)).toBe(true);

      // A body over client_max_body_size (1 MiB), and headers over nginx's buffers (4 x 32 KiB).
      expectProblem(
        await send(nginx.base, '/v1/lab/run', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: Buffer.alloc(2 * 1024 * 1024, 'x'),
        }),
        413,
        'payload_too_large',
      );
      expectProblem(
        await send(nginx.base, '/v1/elements', { headers: { 'x-big': 'y'.repeat(40 * 1024) } }),
        431,
        'headers_too_large',
      );

      // Not HTTP at all: nginx's own plain 400 (there is no request to answer in JSON), never a 500.
      const raw = await new Promise<string>((ok, fail) => {
        const s = connect(portN, '127.0.0.1', () => s.end('NONSENSE\r\n\r\n'));
        let got = '';
        s.on('data', (d) => {
          got += d;
        });
        s.on('end', () => ok(got));
        s.on('error', fail);
      });
      expect(raw).toMatch(/^HTTP\/1\.1 400/);

      // No replica left: the stand-in closed, the other port never listened.
      await new Promise((r) => replica.close(() => r(undefined)));
      replica.closeAllConnections();
      const down = await send(nginx.base, '/v1/elements/Fe');
      expectProblem(down, 503, 'service_unavailable');
    },
    60_000,
  );
});

describe("a replica's own 503 (deploy/nginx.conf)", () => {
  it.skipIf(!NGINX)(
    'is passed on as it is and never takes the replicas out: the next requests are still answered',
    async () => {
      // Two live replicas; /v1/elements/Fe?data_version=... answers as a replica does while that
      // version is being repaired (or a settlement is pending): a 503 of that one request, with
      // Retry-After. Everything else is answered 200.
      const replica = () =>
        createServer((req: IncomingMessage, res: ServerResponse) => {
          if (req.url?.includes('data_version=')) {
            res
              .writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' })
              .end('{"status":503,"code":"data_unavailable"}');
            return;
          }
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        });
      const [a, b] = [replica(), replica()];
      const [portA, portB, portN] = [await freePort(), await freePort(), await freePort()];
      await new Promise<void>((r) => a.listen(portA, '127.0.0.1', () => r()));
      await new Promise<void>((r) => b.listen(portB, '127.0.0.1', () => r()));
      const nginx: NginxProcess = await startNginx(NGINX!, {
        listen: portN,
        upstreams: [portA, portB],
        dir: tempDir('ri-nginx-503-'),
      });
      cleanup.push(() => nginx.stop());
      cleanup.push(() => new Promise((r) => a.close(() => r(undefined))));
      cleanup.push(() => new Promise((r) => b.close(() => r(undefined))));

      for (let i = 0; i < 2; i++) {
        const temporary = await send(nginx.base, '/v1/elements/Fe?data_version=0123456789abcdef');
        expect(temporary.status).toBe(503);
        expect(JSON.parse(temporary.body).code).toBe('data_unavailable');
      }
      // Both replicas answered: neither is left out (nginx's own 503 service_unavailable would say so).
      const next = await Promise.all(Array.from({ length: 10 }, () => send(nginx.base, '/v1/elements')));
      expect(next.map((x) => x.status)).toEqual(Array(10).fill(200));
    },
    60_000,
  );
});

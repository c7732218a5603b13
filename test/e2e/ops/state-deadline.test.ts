import { randomBytes } from 'node:crypto';
import { createServer, type Server, Socket } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isStateUnavailable,
  StateUnavailableError,
  withDeadline,
} from '../../../src/access/state-deadline.js';
import type { StateStore } from '../../../src/access/state-store.js';
import { sampleApp } from '../../helpers/app.js';
import { ri, riBackground, stop, until } from '../../helpers/cli.js';
import { toolError } from '../../helpers/mcp.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { PAID_CONFIG, paidSetup, payingFetch, servedSample } from '../../helpers/x402.js';

/**
 * A deadline on every state-store call: a stalled or closed PostgreSQL gives keyed calls 503
 * `state_unavailable` with Retry-After within the deadline (never a hang, never a 500), /readyz
 * says not ready, and both recover without a restart when PostgreSQL is back.
 */
const PG = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

describe('withDeadline', () => {
  const never = () => new Promise<never>(() => {});

  it('rejects a call that does not settle in time with StateUnavailableError, logging the cause once', async () => {
    const logs: [string, Record<string, unknown>][] = [];
    let answer = never as () => Promise<unknown>;
    const store = withDeadline(
      { findQuote: (_id: string) => answer(), count: 3 },
      { timeoutMs: 50, log: (m, f) => logs.push([m, f]) },
    );
    for (let i = 0; i < 3; i++) {
      const error = await store.findQuote('q').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StateUnavailableError);
      expect(error).toMatchObject({
        code: 'state_unavailable',
        status: 503,
        operation: 'findQuote',
        headers: { 'retry-after': expect.stringMatching(/^\d+$/) },
      });
    }
    expect(store.count).toBe(3);
    expect(logs).toHaveLength(1);
    expect(logs[0]![1]).toMatchObject({ operation: 'findQuote', cause: 'no answer within 50 ms' });
    answer = async () => 'back';
    expect(await store.findQuote('q')).toBe('back');
    expect(logs.map((l) => l[0])).toEqual([
      'state store unavailable: answering 503 state_unavailable',
      'state store answering again',
    ]);
  });

  it('turns connection failures into StateUnavailableError (password redacted) and passes application errors through', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const app = new Error('an account with email a@b.c already exists');
    const logs: Record<string, unknown>[] = [];
    const store = withDeadline(
      {
        a: async () => {
          throw refused;
        },
        b: async () => {
          throw Object.assign(new Error('getaddrinfo ENOTFOUND for postgres://ri:hunter2@db:5432/ri'), {
            code: 'ENOTFOUND',
          });
        },
        c: async () => {
          throw app;
        },
        d: async () => {
          throw Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
        },
      },
      { timeoutMs: 1000, log: (_m, f) => logs.push(f) },
    );
    await expect(store.b()).rejects.toBeInstanceOf(StateUnavailableError);
    expect(logs[0]!.cause).toBe('getaddrinfo ENOTFOUND for postgres://ri:***@db:5432/ri');
    await expect(store.a()).rejects.toMatchObject({ code: 'state_unavailable', reason: refused.message });
    await expect(store.c()).rejects.toBe(app);
    await expect(store.d()).rejects.toBeInstanceOf(StateUnavailableError);
    expect(isStateUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isStateUnavailable(Object.assign(new Error('x'), { code: 'SQLITE_BUSY' }))).toBe(true);
    expect(isStateUnavailable(Object.assign(new Error('syntax'), { code: '42601' }))).toBe(false);
    expect(isStateUnavailable(new TypeError('x is undefined'))).toBe(false);
    expect(JSON.stringify(logs)).not.toContain('hunter2');
  });

  it('bounds close() without rejecting', async () => {
    const store = withDeadline({ close: never }, { timeoutMs: 20 });
    await expect(store.close()).resolves.toBeUndefined();
  });
});

describe('a paid call when the ledger does not answer', () => {
  it('answers 503 state_unavailable, settles nothing, and the same payment buys the answer once the ledger is back', async () => {
    const { chain, facilitator } = await paidSetup();
    let settles = 0;
    const counting = {
      ...facilitator,
      verify: facilitator.verify.bind(facilitator),
      getSupported: facilitator.getSupported.bind(facilitator),
      settle: (...args: Parameters<typeof facilitator.settle>) => {
        settles++;
        return facilitator.settle(...args);
      },
    };
    let stalled = true;
    const ctx = await sampleApp(PAID_CONFIG, {
      facilitator: counting,
      ledger: (state: StateStore) =>
        withDeadline(
          {
            recordPayment: (row: Parameters<StateStore['recordPayment']>[0]) =>
              stalled ? new Promise<boolean>(() => {}) : state.recordPayment(row),
            finishPayment: (id: string, o: Parameters<StateStore['finishPayment']>[1]) =>
              state.finishPayment(id, o),
            findPayment: (n: string, k: string) => state.findPayment(n, k),
            findPaymentById: (id: string) => state.findPaymentById(id),
            listPayments: (f?: Parameters<StateStore['listPayments']>[0]) => state.listPayments(f),
          },
          { timeoutMs: 200 },
        ),
    });
    try {
      const unpaid = await ctx.app.request('/v1/elements/Fe/history');
      expect(unpaid.status).toBe(402);
      const { client } = payingFetch();
      const payload = await client.createPaymentPayload(
        decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!),
      );
      const headers = { 'payment-signature': encodePaymentSignatureHeader(payload) };
      const failed = await ctx.app.request('/v1/elements/Fe/history', { headers });
      expect(failed.status).toBe(503);
      expect(failed.headers.get('content-type')).toBe('application/problem+json');
      expect(failed.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(failed.headers.get('payment-response')).toBeNull();
      expect(((await failed.json()) as { code: string }).code).toBe('state_unavailable');
      expect(settles).toBe(0);
      expect(await ctx.state.listPayments()).toEqual([]);

      stalled = false;
      const paid = await ctx.app.request('/v1/elements/Fe/history', { headers });
      expect(paid.status).toBe(200);
      expect(settles).toBe(1);
      const receipt = decodePaymentResponseHeader(paid.headers.get('payment-response')!);
      expect((await ctx.state.listPayments()).map((r) => [r.status, r.transaction])).toEqual([
        ['settled', receipt.transaction],
      ]);
    } finally {
      await ctx.close();
      await chain.stop();
    }
  }, 60_000);
});

describe('an MCP tool when the state store does not answer', () => {
  it('is an isError result with code state_unavailable', async () => {
    const served = await servedSample();
    try {
      // Every lab quote is kept in the state store; this one never answers.
      served.ctx.state.saveQuote = () => new Promise<void>(() => {});
      const client = new Client({ name: 'ri-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${served.server.base}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${served.ctx.keys.professional}` } },
        }),
      );
      const result = (await client.callTool({
        name: 'lab_quote',
        arguments: { query: 'Ni Fe' },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(toolError(result)).toMatchObject({ code: 'state_unavailable', status: 503 });
      await client.close();
    } finally {
      await served.close();
    }
  });
});

/**
 * A TCP proxy between `ri serve` and PostgreSQL that can stall (hold every byte, both ways, and
 * every new connection) and go down (reset every connection and refuse new ones).
 */
class PgProxy {
  private server: Server | null = null;
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private stalled = false;
  private readonly held: (() => void)[] = [];
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(port = 0): Promise<void> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
  }

  private accept(client: Socket): void {
    const upstream = new Socket();
    const pair = { client, upstream };
    this.pairs.add(pair);
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk) => {
        const send = () => to.writable && to.write(chunk);
        if (this.stalled) this.held.push(send);
        else send();
      });
    forward(client, upstream);
    forward(upstream, client);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    const connect = () => upstream.connect(this.target.port, this.target.host);
    if (this.stalled) this.held.push(connect);
    else connect();
  }

  stall(): void {
    this.stalled = true;
  }

  resume(): void {
    this.stalled = false;
    for (const send of this.held.splice(0)) send();
  }

  /** Resets every connection and stops listening (connections are refused). */
  async down(): Promise<void> {
    this.held.length = 0;
    this.stalled = false;
    for (const { client, upstream } of this.pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    await new Promise<void>((r) => this.server!.close(() => r()));
  }

  async up(): Promise<void> {
    await this.start(this.port);
  }

  async close(): Promise<void> {
    if (this.server?.listening) await this.down();
  }
}

describe('ri serve on a PostgreSQL that stalls and goes down', () => {
  const schema = `ri_deadline_${randomBytes(4).toString('hex')}`;
  const target = new URL(PG);
  const proxy = new PgProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const PASSWORD = `pw-${randomBytes(6).toString('hex')}`;
  let server: ReturnType<typeof riBackground>;
  let base: string;
  let key: string;

  beforeAll(async () => {
    await proxy.start();
    const sample = await sampleDataDir();
    const viaProxy = new URL(PG);
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    viaProxy.password = PASSWORD; // the local server trusts loopback: only here to be kept out of logs
    viaProxy.searchParams.set('schema', schema);
    server = riBackground(
      ['serve', '--port', '0', '--host', '127.0.0.1'],
      {
        DATA_DIR: sample.dataDir,
        STATE_URL: viaProxy.toString(),
        STATE_TIMEOUT_MS: '500',
        LOG_LEVEL: 'info',
      },
      /at (http:\/\/\S+)\/v1/,
    );
    base = (await server.started)[1]!;
    const created = ri(['keys', 'create', '--plan', 'personal', '--email', 'stall@example.org'], {
      STATE_URL: `${PG}?schema=${schema}`,
    });
    expect(created.status, created.stderr).toBe(0);
    key = created.stdout.trim().split('\n').at(-1)!;
  }, 120_000);

  afterAll(async () => {
    if (server) await stop(server.child);
    await proxy.close();
    const client = new pg.Client({ connectionString: PG });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  });

  // A hang shows as an abort here (the stall is held far longer than this); a 503 comes well before.
  const keyed = () =>
    fetch(`${base}/v1/subjects/topic/T10030`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(15_000),
    });
  const readyz = () => fetch(`${base}/readyz`, { signal: AbortSignal.timeout(15_000) });

  async function expectStateUnavailable(res: Response): Promise<void> {
    const body = (await res.json()) as { code: string; status: number };
    expect([res.status, body.code]).toEqual([503, 'state_unavailable']);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  }

  it('answers keyed calls 503 state_unavailable during a stall, says not ready, and recovers when it ends', async () => {
    expect((await keyed()).status).toBe(200);
    expect((await readyz()).status).toBe(200);

    proxy.stall();
    try {
      // More at once than the pool holds: none waits for the stall to end.
      const during = await Promise.all(Array.from({ length: 14 }, () => keyed()));
      for (const res of during) await expectStateUnavailable(res);
      const ready = await readyz();
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({
        ready: false,
        status: 'unavailable',
        state: expect.any(String),
      });
      // Public data does not need the state store.
      expect((await fetch(`${base}/v1/elements/Fe`)).status).toBe(200);
    } finally {
      proxy.resume();
    }
    await until(async () => ((await keyed()).status === 200 ? true : undefined), 20_000);
    await until(async () => ((await readyz()).status === 200 ? true : undefined), 20_000);
  }, 60_000);

  it('answers 503 state_unavailable (never 500) while PostgreSQL is down, and recovers without a restart', async () => {
    await proxy.down();
    try {
      for (let i = 0; i < 3; i++) await expectStateUnavailable(await keyed());
      expect((await readyz()).status).toBe(503);
    } finally {
      await proxy.up();
    }
    await until(async () => ((await keyed()).status === 200 ? true : undefined), 20_000);
    expect((await readyz()).status).toBe(200);
  }, 60_000);

  it('logs the outage with its cause and its end, never the password', async () => {
    // Log lines are written asynchronously: wait for them.
    const logged = () =>
      server
        .output()
        .stdout.split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    const lines = await until(() => {
      const found = logged();
      return found.filter((l) => l.msg === 'state store answering again').length >= 2 ? found : undefined;
    }, 5_000);
    const { stdout, stderr } = server.output();
    const outages = lines.filter((l) => String(l.msg).startsWith('state store unavailable'));
    expect(outages.length).toBeGreaterThanOrEqual(2);
    expect(outages.map((l) => l.cause)).toContainEqual(expect.stringMatching(/no answer within 500 ms/));
    expect(outages.map((l) => l.cause)).toContainEqual(
      expect.stringMatching(/ECONNREFUSED|ECONNRESET|Connection terminated|timeout/),
    );
    expect(lines.filter((l) => l.msg === 'state store answering again').length).toBeGreaterThanOrEqual(2);
    expect(lines.some((l) => l.level === 50 && l.msg === 'request failed')).toBe(false);
    expect(stdout + stderr).not.toContain(PASSWORD);
  });

  it('starts once a server that stalls at its start answers again (each connect over 500 ms)', async () => {
    const slow = new PgProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await slow.start();
    const viaSlow = new URL(PG);
    viaSlow.host = `127.0.0.1:${slow.port}`;
    viaSlow.searchParams.set('schema', schema);
    slow.stall();
    const later = riBackground(
      ['serve', '--port', '0', '--host', '127.0.0.1'],
      { DATA_DIR: (await sampleDataDir()).dataDir, STATE_URL: viaSlow.toString(), STATE_TIMEOUT_MS: '500' },
      /at (http:\/\/\S+)\/v1/,
    );
    try {
      // Several connects time out meanwhile (500 ms each): the start tries again, it does not exit.
      await new Promise((r) => setTimeout(r, 2_000));
      expect(later.child.exitCode).toBeNull();
      slow.resume();
      const started = (await later.started)[1]!;
      expect((await fetch(`${started}/readyz`)).status).toBe(200);
    } finally {
      await stop(later.child);
      await slow.close();
    }
  }, 60_000);
});

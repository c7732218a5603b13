import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DEV_KEYS, startDevChain } from '../../../scripts/dev-chain.mjs';
import { riAsync, riBackground, stop } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';
import { freePort, PAY_TO, PAYER } from '../../helpers/x402.js';
import { findNginx, type NginxProcess, startNginx } from './nginx.js';

/**
 * Two `ri serve` replicas on one PostgreSQL and one Redis behind a real nginx running
 * deploy/nginx.conf, taking x402 payments on a local chain. Under a steady stream of GETs (and
 * lab POSTs, paid calls and `ri keys create` runs), one replica is killed with SIGKILL: nginx
 * must answer every GET 200 (retrying on the other replica), never retry a POST; the key rows
 * must be exactly the keys created, and the ledger exactly the payments taken on chain.
 */
const NGINX = findNginx();
if (!NGINX) console.warn('replicas-nginx: skipped, nginx is not installed (apt-get install nginx-light)');

const PG = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `ri_nginx_${randomBytes(4).toString('hex')}`;
const cleanup: (() => Promise<unknown>)[] = [];

afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => undefined);
});

interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

/**
 * HTTP from a loopback address of this run's own (127.x.y.z): the address nginx passes on in
 * X-Forwarded-For, so this run's keyless budget in the shared Redis is its own.
 */
function client(base: string) {
  const localAddress = `127.${randomInt(1, 255)}.${randomInt(0, 256)}.${randomInt(1, 255)}`;
  const agent = new Agent({ keepAlive: true, maxSockets: 64, localAddress });
  const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<Answer>((resolveAnswer, reject) => {
      const req = request(`${base}${path}`, { method, headers, agent, timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolveAnswer({
            status: res.statusCode ?? 0,
            headers: Object.entries(res.headers).map(([k, v]) => [
              k,
              Array.isArray(v) ? v.join(', ') : String(v),
            ]),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(body);
    });
  /** The official x402 client paying as PAYER, over this client's connections. */
  const paying = () => {
    const x402 = new x402Client();
    registerExactEvmScheme(x402, { signer: PAYER });
    const viaAgent = async (input: string | URL | Request, init?: RequestInit) => {
      const req = new Request(input, init);
      const url = new URL(req.url);
      const a = await send(req.method, `${url.pathname}${url.search}`, Object.fromEntries(req.headers));
      return new Response(a.body, { status: a.status, headers: a.headers });
    };
    return wrapFetchWithPayment(viaAgent as typeof fetch, x402);
  };
  return { send, paying, localAddress, close: () => agent.destroy() };
}

describe('two replicas behind nginx (deploy/nginx.conf)', () => {
  it.skipIf(!NGINX)(
    'a replica killed with SIGKILL under load costs no failed GET, no retried POST, no lost or doubled key or ledger row',
    async () => {
      const sample = await sampleDataDir();
      const [portA, portB, portN] = [await freePort(), await freePort(), await freePort()];
      // Payments: a local chain, the payer funded, and `ri facilitator` settling on it.
      const chain = await startDevChain();
      cleanup.push(() => chain.stop());
      await chain.fund(PAYER.address, 100_000_000n);
      const facilitator = riBackground(
        ['facilitator', '--port', '0'],
        {
          X402_NETWORKS: 'base-sepolia',
          X402_EVM_RPC_URL: chain.rpcUrl,
          X402_FACILITATOR_PRIVATE_KEY: DEV_KEYS.facilitator,
        },
        /(http:\/\/127\.0\.0\.1:\d+)/,
      );
      cleanup.push(() => stop(facilitator.child));
      const facilitatorUrl = (await facilitator.started)[1]!;
      const env: Record<string, string> = {
        DATA_DIR: sample.dataDir,
        STATE_URL: `${PG}?schema=${schema}`,
        REDIS_URL: 'redis://127.0.0.1:6379',
        TRUST_PROXY: '1',
        PUBLIC_URL: `http://127.0.0.1:${portN}`,
        // This run measures failover, not limits: budgets no load here reaches.
        RATE_LIMIT_PER_KEY: '1000000',
        RATE_LIMIT_PER_IP: '1000000',
        X402_NETWORKS: 'base-sepolia',
        X402_PAY_TO_EVM: PAY_TO,
        X402_FACILITATOR_URL: facilitatorUrl,
        LOG_LEVEL: 'warn',
      };
      cleanup.push(async () => {
        const db = new pg.Client({ connectionString: PG });
        await db.connect();
        await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await db.end();
      });
      const replicas = [portA, portB].map((port) =>
        riBackground(['serve', '--port', String(port), '--host', '127.0.0.1'], env, /at (http:\/\/\S+)\/v1/),
      );
      // stop() waits for an exit: not for the replica this test kills.
      for (const r of replicas) cleanup.push(async () => r.child.signalCode === null && stop(r.child));
      await Promise.all(replicas.map((r) => r.started));

      const dir = tempDir('ri-nginx-');
      const nginx: NginxProcess = await startNginx(NGINX!, { listen: portN, upstreams: [portA, portB], dir });
      cleanup.push(() => nginx.stop());

      const created: string[] = [];
      const createKey = async (email: string) => {
        const r = await riAsync(['keys', 'create', '--plan', 'professional', '--email', email], env);
        expect(r.status, r.stderr).toBe(0);
        const key = r.stdout.trim().split('\n').at(-1)!;
        created.push(key);
        return key;
      };
      const before = await Promise.all([1, 2, 3].map((i) => createKey(`before${i}@example.org`)));
      const key = before[0]!;
      const auth = { authorization: `Bearer ${key}` };

      const http = client(nginx.base);
      cleanup.push(async () => http.close());
      // TRUST_PROXY=1 behind nginx: the client is the address nginx saw, whatever the client
      // wrote into X-Forwarded-For (two forged addresses, one budget).
      const remaining = async (forged: string) => {
        const a = await http.send('GET', '/v1/elements', { 'x-forwarded-for': forged });
        expect(a.status).toBe(200);
        return Number(/;r=(\d+)/.exec(a.headers.find(([k]) => k === 'ratelimit')?.[1] ?? '')?.[1]);
      };
      const first = await remaining('203.0.113.1');
      expect(await remaining('203.0.113.2')).toBe(first - 1);

      const quote = await http.send('GET', '/v1/lab/quote?q=Ni%20Fe', auth);
      expect(quote.status, quote.body).toBe(200);
      const runBody = JSON.stringify({ quote: JSON.parse(quote.body), depth: 'papers_20' });

      // The load: GETs keyless and keyed (each keyed one reads PostgreSQL), and lab POSTs.
      const paths: [string, Record<string, string>][] = [
        ['/v1/elements', {}],
        ['/v1/elements/Fe', {}],
        ['/v1/elements/Fe/history', auth],
        ['/v1/elements/Ni/papers', auth],
        ['/v1/subjects/topic/T10030', auth],
        ['/v1/research?q=catalysis', auth],
        ['/healthz', {}],
      ];
      const gets = { ok: 0, failed: [] as string[] };
      const posts: number[] = [];
      let running = true;
      const getWorker = async (n: number) => {
        for (let i = n; running; i++) {
          const [path, headers] = paths[i % paths.length]!;
          try {
            const a = await http.send('GET', path, headers);
            if (a.status === 200) gets.ok++;
            else gets.failed.push(`${path}: ${a.status} ${a.body.slice(0, 200)}`);
          } catch (e) {
            gets.failed.push(`${path}: ${(e as Error).message}`);
          }
        }
      };
      const postWorker = async () => {
        while (running) {
          const a = await http
            .send('POST', '/v1/lab/run', { ...auth, 'content-type': 'application/json' }, runBody)
            .catch(() => ({ status: -1, body: '' }));
          posts.push(a.status);
        }
      };
      // Paid calls, one at a time: each a 402, then the same GET with a signed payment.
      const paid = { ok: [] as string[], refused: [] as string[] };
      const payingFetch = http.paying();
      const paidWorker = async () => {
        while (running) {
          try {
            const res = await payingFetch(`${nginx.base}/v1/elements/Fe/history`);
            const body = await res.text();
            if (res.status === 200)
              paid.ok.push(decodePaymentResponseHeader(res.headers.get('payment-response')!).transaction);
            else paid.refused.push(`${res.status} ${body.slice(0, 300)}`);
          } catch (e) {
            paid.refused.push(`error ${(e as Error).message}`);
          }
        }
      };
      const paidBefore = await chain.balanceOf(PAYER.address);
      const workers = [...Array.from({ length: 12 }, (_, n) => getWorker(n)), postWorker(), paidWorker()];
      const until = async (probe: () => boolean) => {
        while (!probe()) await new Promise((r) => setTimeout(r, 20));
      };

      // Both replicas answering under load, then one killed without warning.
      await until(() => gets.ok >= 400 && paid.ok.length >= 3);
      const servedBy = () =>
        new Set(
          readFileSync(nginx.accessLog, 'utf8')
            .split('\n')
            .flatMap((l) => /upstream=(\S+?),? /.exec(l)?.[1] ?? []),
        );
      expect(servedBy()).toEqual(new Set([`127.0.0.1:${portA}`, `127.0.0.1:${portB}`]));
      const atKill = gets.ok;
      replicas[0]!.child.kill('SIGKILL');
      // Keys created while the replica dies and the load goes on.
      const during = await Promise.all([1, 2, 3].map((i) => createKey(`during${i}@example.org`)));
      const paidAtKill = paid.ok.length;
      await until(() => gets.ok >= atKill + 1500 && paid.ok.length >= paidAtKill + 3);
      running = false;
      await Promise.all(workers);

      expect(gets.failed, gets.failed.slice(0, 5).join('\n')).toEqual([]);
      expect(gets.ok).toBeGreaterThanOrEqual(1900);
      // A POST is never retried: the ones the dead replica held get nginx's 503
      // service_unavailable (deploy/nginx.conf turns its 502 into that problem), the rest 200.
      expect(posts.length).toBeGreaterThan(0);
      expect(posts.filter((s) => s !== 200 && s !== 503)).toEqual([]);

      const log = readFileSync(nginx.accessLog, 'utf8').split('\n').filter(Boolean);
      // nginx felt the kill: a request the dead replica could not answer went to the other one,
      // or a POST it held was answered 503. Not necessarily a GET: with max_fails=1 the first
      // failure of any request leaves the replica out for fail_timeout (5 s), which can outlast
      // the rest of the load, so the one failure may be a POST's.
      const retried = log.filter((l) => l.includes('"GET ') && /upstream=\S+, /.test(l));
      const felt = log.filter((l) => /upstream=\S+, /.test(l) || (l.includes('"POST ') && /" 503 /.test(l)));
      expect(felt.length).toBeGreaterThan(0);
      // A POST is never sent twice. nginx passes one on only when it was not sent: a refused
      // connection, logged with no connect time (uct=-) for every attempt but the last.
      const sentTwice = log.filter((l) => {
        if (!l.includes('"POST ') || !/upstream=\S+, /.test(l)) return false;
        const connects = (/ uct=(.*?) id=/.exec(l)?.[1] ?? '').split(', ');
        return connects.slice(0, -1).some((t) => t !== '-');
      });
      expect(sentTwice).toEqual([]);

      const after = await Promise.all([1, 2, 3].map((i) => createKey(`after${i}@example.org`)));
      // Every key created is one row, and every row a key created: nothing lost, nothing doubled.
      const db = new pg.Client({ connectionString: PG });
      await db.connect();
      const rows = await db.query<{ prefix: string }>(`SELECT prefix FROM ${schema}.api_keys`);
      const prefixes = created.map((k) => k.split('_')[1]!);
      expect(rows.rows.map((r) => r.prefix).sort()).toEqual([...prefixes].sort());
      expect(new Set(prefixes).size).toBe(9);
      for (const k of [...before, ...during, ...after]) {
        const a = await http.send('GET', '/v1/subjects/topic/T10030', { authorization: `Bearer ${k}` });
        expect(a.status).toBe(200);
      }

      // The ledger: a row left pending by the killed replica is settled from the chain by
      // `ri payments reconcile`; then every paid answer has its settled row, no payment has
      // two rows, and the payer lost on chain exactly what the settled rows say.
      const reconcile = await riAsync(['payments', 'reconcile'], { ...env, X402_EVM_RPC_URL: chain.rpcUrl });
      expect(reconcile.status, reconcile.stderr).toBe(0);
      const ledger = (
        await db.query<{ status: string; amount: string; nonce: string; transaction: string | null }>(
          `SELECT status, amount, nonce, "transaction" FROM ${schema}.payments`,
        )
      ).rows;
      await db.end();
      const settled = ledger.filter((r) => r.status === 'settled');
      expect(new Set(ledger.map((r) => r.nonce)).size).toBe(ledger.length);
      for (const tx of paid.ok) expect(settled.filter((r) => r.transaction === tx)).toHaveLength(1);
      const spent = paidBefore - (await chain.balanceOf(PAYER.address));
      expect(spent).toBe(settled.reduce((sum, r) => sum + BigInt(r.amount), 0n));
      // At most the one paid call in flight on the killed replica is refused (its payment is
      // held there), and only as a replay: never charged twice, never a 5xx.
      expect(paid.refused.length).toBeLessThanOrEqual(1);
      for (const r of paid.refused) expect(r).toMatch(/^402 .*payment_replayed/);

      console.log(
        `replicas-nginx: ${gets.ok} GETs answered 200 (${gets.ok - atKill} after the kill), ` +
          `${retried.length} GETs retried by nginx (${felt.length} requests met the dead replica), ${posts.length} POSTs (${posts.filter((s) => s === 503).length} 503), ` +
          `${paid.ok.length} paid calls answered (${paid.refused.length} refused), ledger ${ledger.length} rows ` +
          `(${settled.length} settled), reconcile: ${reconcile.stderr.trim()}`,
      );
    },
    180_000,
  );
});

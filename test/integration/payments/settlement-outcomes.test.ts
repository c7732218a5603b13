/**
 * Settlements whose outcome the service does not learn in time, over real HTTP: the service
 * (through the x402 reference HTTP client) in front of a facilitator stand-in that is slow, drops
 * the connection or answers 5xx, settling on the local chain. Whatever the facilitator does, the
 * payer gets the content exactly once per payment, nothing is answered without a settlement, and
 * the ledger agrees with the chain. Times are scaled down: the payer's deadline is 1 s here (60 s
 * by default), a "15 s" facilitator takes 2.5 s and a "60 s" one 5 s.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload } from '@x402/core/types';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DevChain } from '../../../scripts/dev-chain.mjs';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { httpFacilitator } from '../../../src/payments/facilitator.js';
import { buildSnapshot } from '../../../src/snapshot-build/build-snapshot.js';
import { riAsync } from '../../helpers/cli.js';
import { facilitatorStandIn, type SettleMode } from '../../helpers/facilitator-stand-in.js';
import { toolError, toolTerms } from '../../helpers/mcp.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';
import {
  expectLedgerMatchesChain,
  PAID_CONFIG,
  PAY_TO,
  PAYER,
  paidSetup,
  payingFetch,
  servedSample,
} from '../../helpers/x402.js';

let chain: DevChain;
let real: FacilitatorClient;
let standIn: Awaited<ReturnType<typeof facilitatorStandIn>>;
let service: Awaited<ReturnType<typeof servedSample>>;
/** How far the payment service's clock runs ahead of the system's (past a settle deadline, without waiting). */
let ahead = 0;

beforeAll(async () => {
  ({ chain, facilitator: real } = await paidSetup());
  standIn = await facilitatorStandIn(real);
  service = await servedSample(
    { ...PAID_CONFIG, X402_SETTLE_TIMEOUT_SECONDS: 1, X402_EVM_RPC_URL: chain.rpcUrl },
    { facilitator: httpFacilitator(standIn.url), paymentsNow: () => Date.now() + ahead },
  );
}, 120_000);

afterAll(async () => {
  await service?.close();
  await standIn?.close();
  await chain?.stop();
});

const url = (path: string) => `${service.server.base}/v1${path}`;
const balance = () => chain.balanceOf(PAYER.address);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function signFor(path: string): Promise<{ header: string; payload: PaymentPayload }> {
  const unpaid = await fetch(url(path));
  expect(unpaid.status).toBe(402);
  const payload = await payingFetch().client.createPaymentPayload(
    decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!),
  );
  return { header: encodePaymentSignatureHeader(payload), payload };
}

const pay = (path: string, header: string) => fetch(url(path), { headers: { 'payment-signature': header } });

function nonceOf(payload: PaymentPayload): string {
  const auth = (payload.payload as { authorization: { from: string; nonce: string } }).authorization;
  return `${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}`;
}

/** The payment's row that is not failed (as the ledger finds a payment). */
async function rowOf(payload: PaymentPayload) {
  return (await service.ctx.state.listPayments()).find(
    (r) => r.nonce === nonceOf(payload) && r.status !== 'failed',
  );
}

async function until(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await sleep(100);
  }
}

/** The pending answer: 503 settlement_pending, no content, a time to retry until. */
async function expectPending(res: Response): Promise<void> {
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBeTruthy();
  const body = (await res.json()) as Record<string, unknown>;
  expect(body.code).toBe('settlement_pending');
  expect(Date.parse(String(body.retry_until))).toBeGreaterThan(Date.now());
  expect(body).not.toHaveProperty('series');
  expect(res.headers.get('payment-response')).toBeNull();
}

/** The content, with the receipt of the row's transaction. */
async function expectContent(res: Response, payload: PaymentPayload): Promise<string> {
  expect(res.status).toBe(200);
  const text = await res.text();
  expect(JSON.parse(text)).toHaveProperty('series');
  const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
  expect(receipt.success).toBe(true);
  const row = await rowOf(payload);
  expect(row).toMatchObject({ status: 'settled', transaction: receipt.transaction });
  return text;
}

function mode(m: SettleMode) {
  standIn.state.mode = m;
}

describe('a settlement whose outcome is not known in time', () => {
  it('settled at once but slow to answer ("15 s"): the chain shows the transfer, and the first request gets the content, charged once', async () => {
    mode({ kind: 'slow', ms: 2_500 });
    const path = '/elements/Fe/history';
    const { header, payload } = await signFor(path);
    const before = await balance();
    await expectContent(await pay(path, header), payload);
    expect(before - (await balance())).toBe(50_000n);
    mode({ kind: 'ok' });
  });

  it('a transfer that lands after the deadline ("60 s"): each retry before it lands is pending again, then the content', async () => {
    mode({ kind: 'slow-before', ms: 2_500 });
    const path = '/elements/Ni/history';
    const { header, payload } = await signFor(path);
    const before = await balance();
    await expectPending(await pay(path, header));
    await expectPending(await pay(path, header));
    // The facilitator answers later: recorded as it lands, no retry needed for the ledger.
    await until(async () => (await rowOf(payload))?.status === 'settled');
    mode({ kind: 'ok' });
    const settles = standIn.state.settles;
    const first = await expectContent(await pay(path, header), payload);
    // Asked again, the same bytes, no second charge and no second settlement.
    expect(await (await pay(path, header)).text()).toBe(first);
    expect(standIn.state.settles).toBe(settles);
    expect(before - (await balance())).toBe(50_000n);
  });

  for (const kind of ['drop', 'error-after'] as const) {
    it(`settled, then ${kind === 'drop' ? 'the connection dropped' : 'a 502'}: the chain shows the transfer, the content at once`, async () => {
      mode({ kind });
      const path = kind === 'drop' ? '/elements/Co/history' : '/elements/Cu/history';
      const { header, payload } = await signFor(path);
      const before = await balance();
      await expectContent(await pay(path, header), payload);
      expect(before - (await balance())).toBe(50_000n);
      mode({ kind: 'ok' });
      // A retry is the same answer, not a second settlement.
      const settles = standIn.state.settles;
      expect((await pay(path, header)).status).toBe(200);
      expect(standIn.state.settles).toBe(settles);
    });
  }

  it('a 500 before settling: pending, nothing moved; the retry settles it once the facilitator is back', async () => {
    mode({ kind: 'error-before' });
    const path = '/elements/Zn/history';
    const { header, payload } = await signFor(path);
    const before = await balance();
    await expectPending(await pay(path, header));
    expect(await balance()).toBe(before);
    mode({ kind: 'ok' });
    await expectContent(await pay(path, header), payload);
    expect(before - (await balance())).toBe(50_000n);
  });

  it('without a retry, the server resolves a pending row from the chain in the background', async () => {
    mode({ kind: 'error-before' });
    const path = '/elements/Mn/history';
    const { header, payload } = await signFor(path);
    await expectPending(await pay(path, header));
    expect((await rowOf(payload))?.status).toBe('pending');
    // The payment is carried out on chain by someone else (another facilitator the payer used).
    const row = await rowOf(payload);
    await real.settle(payload, payload.accepted);
    mode({ kind: 'ok' });
    await service.ctx.payments.resolvePending();
    expect(await rowOf(payload)).toMatchObject({
      id: row!.id,
      status: 'settled',
      transaction: expect.stringMatching(/^0x/),
    });
    await expectContent(await pay(path, header), payload);
  });

  it('ri payments reconcile takes back a row written failed for a transfer that went through, whatever its error', async () => {
    mode({ kind: 'error-before' });
    const path = '/elements/Sc/history';
    const { header, payload } = await signFor(path);
    await expectPending(await pay(path, header));
    const row = await rowOf(payload);
    await real.settle(payload, payload.accepted);
    // As a release before this one left it: failed, with the facilitator's own reason.
    const db = new Database(service.ctx.statePath);
    db.prepare(
      "UPDATE payments SET status = 'failed', error = 'invalid_exact_evm_transaction_failed' WHERE id = ?",
    ).run(row!.id);
    db.close();
    mode({ kind: 'ok' });
    const rec = await riAsync(['payments', 'reconcile'], {
      STATE_URL: `sqlite:${service.ctx.statePath}`,
      X402_EVM_RPC_URL: chain.rpcUrl,
      X402_PAY_TO_EVM: PAY_TO,
      X402_NETWORKS: 'base-sepolia',
    });
    expect(rec.stderr).toMatch(/1 settled, 0 failed/);
    expect(rec.stderr).toMatch(
      /0 transfer\(s\) without a settled row, 0 settled row\(s\) without a transfer/,
    );
    expect(rec.status).toBe(0);
    expect(await rowOf(payload)).toMatchObject({
      status: 'settled',
      transaction: expect.stringMatching(/^0x/),
    });
    // And the payer's retry gets the answer it paid for.
    await expectContent(await pay(path, header), payload);
  });

  it('a refusal (400) with nothing on chain is settlement_failed: no content, nothing moved; the row is failed once the payment has expired', async () => {
    mode({ kind: 'refuse' });
    const path = '/elements/Ti/history';
    const { header, payload } = await signFor(path);
    const before = await balance();
    const res = await pay(path, header);
    expect(res.status).toBe(402);
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe('settlement_failed');
    expect(body.detail).toMatch(/the chain shows no transfer for it/);
    expect(body.detail).not.toMatch(/Nothing was charged/);
    // The facilitator's word alone: the row waits for the chain until the payment has expired.
    expect(await rowOf(payload)).toMatchObject({ status: 'pending' });
    expect(await balance()).toBe(before);
    ahead = 24 * 60 * 60 * 1000;
    try {
      await service.ctx.payments.resolvePending();
    } finally {
      ahead = 0;
    }
    expect(await rowOf(payload)).toBeUndefined(); // findable only among failed rows now
    expect(
      (await service.ctx.state.listPayments({ status: 'failed' })).some((r) => r.nonce === nonceOf(payload)),
    ).toBe(true);
    mode({ kind: 'ok' });
  });
});

describe('over MCP', () => {
  it('a transfer that lands late is a settlement_pending tool error; the same call with the same payment then gets the answer, charged once', async () => {
    const mcp = new Client({ name: 'ri-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${service.server.base}/mcp`)));
    await mcp.listTools(); // as hosts do: results are then checked against the output schemas
    const call = async (meta?: Record<string, unknown>) =>
      (await mcp.callTool({
        name: 'get_element_papers',
        arguments: { symbol: 'Fe', limit: 5 },
        ...(meta ? { _meta: meta } : {}),
      })) as CallToolResult;
    const unpaid = await call();
    expect(unpaid.isError).toBe(true);
    const payload = await payingFetch().client.createPaymentPayload(toolTerms(unpaid));
    mode({ kind: 'slow-before', ms: 2_500 });
    const before = await balance();
    const pending = await call({ 'x402/payment': payload });
    expect(pending.isError).toBe(true);
    expect(toolError(pending)).toMatchObject({ code: 'settlement_pending' });
    expect(pending.structuredContent).toBeUndefined();
    await until(async () => (await rowOf(payload))?.status === 'settled');
    mode({ kind: 'ok' });
    const paid = await call({ 'x402/payment': payload });
    expect(paid.isError ?? false).toBe(false);
    expect(paid.structuredContent).toHaveProperty('papers');
    expect(
      (paid._meta as { 'x402/payment-response': { transaction: string } })['x402/payment-response']
        .transaction,
    ).toBe((await rowOf(payload))?.transaction);
    expect(before - (await balance())).toBe(20_000n);
    await mcp.close();
  });
});

describe('what a retry may get', () => {
  it('a forged payment reusing a paid nonce (value 1, validBefore 1, garbage signature) gets nothing', async () => {
    mode({ kind: 'ok' });
    const path = '/elements/V/history';
    const { header, payload } = await signFor(path);
    await expectContent(await pay(path, header), payload);
    const auth = (payload.payload as { authorization: Record<string, string> }).authorization;
    const forged = {
      ...payload,
      payload: {
        ...payload.payload,
        signature: `0x${'ab'.repeat(65)}`,
        authorization: { ...auth, value: '1', validBefore: '1' },
      },
    } as PaymentPayload;
    const res = await pay(path, encodePaymentSignatureHeader(forged));
    expect([402, 409]).toContain(res.status);
    expect(JSON.parse(await res.text())).not.toHaveProperty('series');
  });

  it('a retry after a new data version is published gets the bytes it paid for, not the new data', async () => {
    mode({ kind: 'ok' });
    const path = '/elements/Fe/history?resolution=yearly';
    const { header, payload } = await signFor(path);
    const first = await expectContent(await pay(path, header), payload);
    const paidVersion = JSON.parse(first).data_version as string;
    const extra = Array.from({ length: 10 }, (_, i) =>
      work(991_000_001 + i, {
        title: `Iron oxide catalyst ${i}`,
        publication_date: '2025-11-01',
        publication_year: 2025,
      }),
    );
    const dataDir = service.ctx.dataDir;
    await ingest(
      join(dataDir, 'corpus.duckdb'),
      expandWorksPaths([writeWorks(join(tempDir(), 'extra.jsonl'), extra)]),
    );
    const built = await buildSnapshot(join(dataDir, 'corpus.duckdb'), join(dataDir, 'snapshots'), {
      keep: 5,
    });
    await service.ctx.snapshots.refresh();
    expect(service.ctx.snapshots.version).toBe(built.version);
    expect(built.version).not.toBe(paidVersion);
    const retry = await pay(path, header);
    expect(retry.status).toBe(200);
    expect(await retry.text()).toBe(first);
  });

  it("a retry a day after the payment's validity and settlement is refused, saying it was settled and when", async () => {
    mode({ kind: 'ok' });
    const path = '/elements/Cr/history';
    const { header, payload } = await signFor(path);
    const paid = await expectContent(await pay(path, header), payload);
    const row = await rowOf(payload);
    // Hours after the payment's validity: still its answer.
    const db = new Database(service.ctx.statePath);
    const setTimes = (validUntil: string, updatedAt: string) =>
      db
        .prepare('UPDATE payments SET valid_until = ?, updated_at = ? WHERE id = ?')
        .run(validUntil, updatedAt, row!.id);
    const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
    setTimes(hoursAgo(23), hoursAgo(23));
    expect(await (await pay(path, header)).text()).toBe(paid);
    // More than 24 hours after both: refused, and told that it was settled, not that nothing was charged.
    setTimes(hoursAgo(25), hoursAgo(25));
    db.close();
    const res = await pay(path, header);
    expect(res.status).toBe(402);
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe('payment_replayed');
    expect(body.detail).toContain(`was settled at ${hoursAgo(25).slice(0, 13)}`);
    expect(body.detail).toContain(row!.transaction!);
    expect(body.detail).not.toMatch(/[Nn]othing was charged/);
  });
});

describe('after every payment of this file', () => {
  it('the chain and the ledger agree: every transfer is a settled row, every settled row a transfer', async () => {
    await expectLedgerMatchesChain(chain, [service.ctx.state]);
  });
});

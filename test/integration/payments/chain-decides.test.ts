/**
 * The chain decides what was paid, never a facilitator's word alone: over real HTTP and MCP, with
 * the settle deadline as `ri serve` has it (30 s), through a facilitator stand-in that
 *   (a) settles, then answers "failed";
 *   (b) settles through an RPC connection that loses the reply to eth_sendRawTransaction (the
 *       transaction is mined; the reference facilitator reports a failure);
 *   (c) settles and never answers;
 *   (d) refuses without settling.
 * (a)-(c) give the answer at once, settled once, the ledger equal to the chain; (d) gives 402 and
 * nothing moves. Then the terms: a payment edited in any field is refused before settlement.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEYS, type DevChain } from '../../../scripts/dev-chain.mjs';
import { httpFacilitator } from '../../../src/payments/facilitator.js';
import { localFacilitator } from '../../../src/payments/local-facilitator.js';
import { riAsync } from '../../helpers/cli.js';
import { facilitatorStandIn, lossyRpc, type SettleMode } from '../../helpers/facilitator-stand-in.js';
import { toolError, toolTerms } from '../../helpers/mcp.js';
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
let lossy: Awaited<ReturnType<typeof lossyRpc>>;
let standIn: Awaited<ReturnType<typeof facilitatorStandIn>>;
let service: Awaited<ReturnType<typeof servedSample>>;
let mcp: Client;

beforeAll(async () => {
  ({ chain, facilitator: real } = await paidSetup());
  lossy = await lossyRpc(chain.rpcUrl);
  const onLossyRpc = localFacilitator({
    rpcUrl: lossy.url,
    privateKey: DEV_KEYS.facilitator,
    networks: ['base-sepolia'],
  });
  standIn = await facilitatorStandIn(real, onLossyRpc);
  service = await servedSample(
    { ...PAID_CONFIG, X402_EVM_RPC_URL: chain.rpcUrl },
    { facilitator: httpFacilitator(standIn.url) },
  );
  mcp = new Client({ name: 'ri-test', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${service.server.base}/mcp`)));
  await mcp.listTools(); // as hosts do: results are then checked against the output schemas
}, 120_000);

afterAll(async () => {
  await mcp?.close();
  await service?.close();
  await standIn?.close();
  await lossy?.close();
  await chain?.stop();
});

const url = (path: string) => `${service.server.base}/v1${path}`;
const balance = () => chain.balanceOf(PAYER.address);
const mode = (m: SettleMode) => {
  standIn.state.mode = m;
};

async function termsOf(path: string): Promise<PaymentRequired> {
  const unpaid = await fetch(url(path));
  expect(unpaid.status).toBe(402);
  return decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
}

const sign = (terms: PaymentRequired) => payingFetch().client.createPaymentPayload(terms);
const pay = (path: string, payload: PaymentPayload) =>
  fetch(url(path), { headers: { 'payment-signature': encodePaymentSignatureHeader(payload) } });

function nonceOf(payload: PaymentPayload): string {
  const auth = (payload.payload as { authorization: { from: string; nonce: string } }).authorization;
  return `${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}`;
}

const rowsOf = async (payload: PaymentPayload) =>
  (await service.ctx.state.listPayments()).filter((r) => r.nonce === nonceOf(payload));

/** One paid call through a door: REST (a history read) or MCP (a papers list), with what it answered. */
interface Door {
  name: string;
  price: bigint;
  sign(symbol: string): Promise<PaymentPayload>;
  pay(symbol: string, payload: PaymentPayload): Promise<{ ok: boolean; code?: string; transaction?: string }>;
}

const rest: Door = {
  name: 'REST',
  price: 50_000n,
  sign: async (symbol) => sign(await termsOf(`/elements/${symbol}/history`)),
  async pay(symbol, payload) {
    const res = await pay(`/elements/${symbol}/history`, payload);
    const body = (await res.json()) as Record<string, unknown>;
    if (res.status === 200) {
      expect(body).toHaveProperty('series');
      return {
        ok: true,
        transaction: decodePaymentResponseHeader(res.headers.get('payment-response')!).transaction,
      };
    }
    expect(body).not.toHaveProperty('series');
    return { ok: false, code: String(body.code) };
  },
};

const call = async (symbol: string, meta?: Record<string, unknown>) =>
  (await mcp.callTool({
    name: 'get_element_papers',
    arguments: { symbol, limit: 5 },
    ...(meta ? { _meta: meta } : {}),
  })) as CallToolResult;

const overMcp: Door = {
  name: 'MCP',
  price: 20_000n,
  sign: async (symbol) => sign(toolTerms(await call(symbol))),
  async pay(symbol, payload) {
    const r = await call(symbol, { 'x402/payment': payload });
    if (!r.isError) {
      expect(r.structuredContent).toHaveProperty('papers');
      return {
        ok: true,
        transaction: (r._meta as { 'x402/payment-response': { transaction: string } })[
          'x402/payment-response'
        ].transaction,
      };
    }
    expect(r.structuredContent).toBeUndefined();
    const problem = toolError(r);
    return { ok: false, code: String(problem?.code ?? toolTerms(r).error) };
  },
};

const CASES = [
  { what: '(a) settles, then answers "failed"', mode: { kind: 'fail-after' } as SettleMode },
  { what: '(b) loses the RPC answer after broadcasting', mode: { kind: 'lost-rpc' } as SettleMode },
  { what: '(c) settles and never answers', mode: { kind: 'hang' } as SettleMode },
] as const;

describe.each([rest, overMcp])('over $name', (door) => {
  const symbols = ['Fe', 'Ni', 'Co', 'Ti'];

  CASES.forEach((c, i) => {
    it(`${c.what}: the answer at once, settled once, from the chain's record`, async () => {
      const symbol = symbols[i]!;
      const payload = await door.sign(symbol);
      const before = await balance();
      const lostBefore = lossy.lost();
      mode(c.mode);
      const started = Date.now();
      const answered = await door.pay(symbol, payload);
      const took = Date.now() - started;
      mode({ kind: 'ok' });
      expect(answered.ok).toBe(true);
      // The settle deadline is 30 s: an answer before it came from the chain, not the facilitator.
      expect(took).toBeLessThan(30_000);
      if (c.mode.kind === 'lost-rpc') expect(lossy.lost()).toBeGreaterThan(lostBefore);
      expect(before - (await balance())).toBe(door.price);
      const rows = await rowsOf(payload);
      expect(rows).toMatchObject([{ status: 'settled', transaction: answered.transaction }]);
      // Asked again with the same payment: the same receipt, nothing moves.
      const again = await door.pay(symbol, payload);
      expect(again).toMatchObject({ ok: true, transaction: answered.transaction });
      expect(before - (await balance())).toBe(door.price);
    });
  });

  it('(d) refuses without settling: 402 settlement_failed, nothing moves', async () => {
    const symbol = symbols[3]!;
    const payload = await door.sign(symbol);
    const before = await balance();
    mode({ kind: 'refuse' });
    const answered = await door.pay(symbol, payload);
    mode({ kind: 'ok' });
    expect(answered).toEqual({
      ok: false,
      code: door === rest ? 'settlement_failed' : expect.stringMatching(/refused to settle it/),
    });
    expect(await balance()).toBe(before);
    expect(await rowsOf(payload)).toMatchObject([{ status: 'pending', transaction: null }]);
  });
});

describe("the terms are the service's, not the payer's", () => {
  const path = '/elements/Cu/history';

  /** A payment refused before settlement: 402 payment_terms_mismatch naming the field; no row, no settle, nothing moved. */
  async function expectRefused(payload: PaymentPayload, field: string): Promise<void> {
    const before = await balance();
    const settles = standIn.state.settles;
    const res = await pay(path, payload);
    expect(res.status).toBe(402);
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe('payment_terms_mismatch');
    expect(body.detail).toContain(`${field} is `);
    expect(body).not.toHaveProperty('series');
    expect(standIn.state.settles).toBe(settles);
    expect(await balance()).toBe(before);
    expect(await rowsOf(payload)).toEqual([]);
  }

  for (const [field, value] of [
    ['amount', '1'],
    ['payTo', PAYER.address],
    ['maxTimeoutSeconds', 315_360_000],
  ] as const) {
    it(`terms edited before signing (${field}) are refused`, async () => {
      const terms = await termsOf(path);
      const edited = { ...terms, accepts: [{ ...terms.accepts[0]!, [field]: value }] };
      await expectRefused(await sign(edited), field);
    });
  }

  // The x402 client will not sign for a token or network it does not know: the payer edits the offer after.
  for (const [field, value] of [
    ['asset', '0x0000000000000000000000000000000000000001'],
    ['network', 'eip155:8453'],
  ] as const) {
    it(`an offer edited after signing (${field}) is refused`, async () => {
      const terms = await termsOf(path);
      const payload = await sign(terms);
      await expectRefused({ ...payload, accepted: { ...payload.accepted, [field]: value } }, field);
    });
  }

  it('a validity signed for ten years, sent with the offer as it was, is refused', async () => {
    const terms = await termsOf(path);
    const payload = await sign({
      ...terms,
      accepts: [{ ...terms.accepts[0]!, maxTimeoutSeconds: 315_360_000 }],
    });
    await expectRefused({ ...payload, accepted: terms.accepts[0]! }, 'authorization.validBefore');
  });

  it('an authorization to another address, or for another amount, sent with the offer as it was, is refused', async () => {
    const terms = await termsOf(path);
    const elsewhere = await sign({ ...terms, accepts: [{ ...terms.accepts[0]!, payTo: PAYER.address }] });
    await expectRefused({ ...elsewhere, accepted: terms.accepts[0]! }, 'authorization.to');
    const less = await sign({ ...terms, accepts: [{ ...terms.accepts[0]!, amount: '1' }] });
    await expectRefused({ ...less, accepted: terms.accepts[0]! }, 'authorization.value');
  });

  it('a payment naming another resource is refused', async () => {
    const terms = await termsOf(path);
    const payload = await sign(terms);
    await expectRefused(
      {
        ...payload,
        resource: { ...payload.resource!, url: `${service.server.base}/v1/elements/Au/history` },
      },
      'resource',
    );
    // The same signed payment, as it was: taken.
    expect((await pay(path, payload)).status).toBe(200);
  });
});

describe('one payment identifier, two payments at once', () => {
  it('the second is 409 payment_id_conflict, and its nonce is free again', async () => {
    const path = '/elements/Zn/history';
    const id = generatePaymentId();
    const withId = async () => {
      const terms = await termsOf(path);
      appendPaymentIdentifierToExtensions(terms.extensions!, id);
      return sign(terms);
    };
    const [one, two] = [await withId(), await withId()];
    const before = await balance();
    const answers = await Promise.all([pay(path, one), pay(path, two)]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409]);
    const loser = answers[0]!.status === 409 ? one : two;
    expect(((await answers.find((r) => r.status === 409)!.json()) as { code: string }).code).toBe(
      'payment_id_conflict',
    );
    expect(before - (await balance())).toBe(50_000n);
    // The loser's authorization, with an identifier of its own: its nonce was let go, so it pays.
    const renamed = { ...loser, extensions: {} as Record<string, unknown> };
    appendPaymentIdentifierToExtensions(renamed.extensions, generatePaymentId());
    expect((await pay(path, renamed)).status).toBe(200);
    expect(before - (await balance())).toBe(100_000n);
  });
});

describe('after every payment of this file', () => {
  it('the chain and the ledger agree, and reconcile finds nothing to mend', async () => {
    await expectLedgerMatchesChain(chain, [service.ctx.state]);
    const rec = await riAsync(['payments', 'reconcile'], {
      STATE_URL: `sqlite:${service.ctx.statePath}`,
      X402_EVM_RPC_URL: chain.rpcUrl,
      X402_PAY_TO_EVM: PAY_TO,
      X402_NETWORKS: 'base-sepolia',
    });
    expect(rec.stderr).toMatch(/0 settled, 0 failed/);
    expect(rec.stderr).toMatch(
      /0 transfer\(s\) without a settled row, 0 settled row\(s\) without a transfer/,
    );
    expect(rec.status).toBe(0);
  });
});

describe('reconcile, both ways', () => {
  it('a transfer with no row and a settled row with no transfer are printed, counted in /metrics, and exit 3', async () => {
    // A payment carried out on chain that never reached the service's ledger.
    const terms = await termsOf('/elements/Mo/history');
    const stray = await sign(terms);
    const settled = await real.settle(stray, terms.accepts[0]!);
    expect(settled.success).toBe(true);
    // A row that says settled for money that never moved.
    const ghost = {
      id: 'ghost-row',
      operation: 'getElementHistory',
      resource: url('/elements/W/history'),
      amount: '50000',
      network: 'eip155:84532',
      asset: terms.accepts[0]!.asset,
      payer: PAYER.address,
      nonce: `${PAYER.address.toLowerCase()}:0x${'ab'.repeat(32)}`,
      payloadHash: 'f'.repeat(64),
      validUntil: new Date(Date.now() + 60_000).toISOString(),
      dataVersion: null,
    };
    expect(await service.ctx.state.recordPayment(ghost)).toBe(true);
    await service.ctx.state.finishPayment(ghost.id, {
      status: 'settled',
      transaction: `0x${'cd'.repeat(32)}`,
    });

    const rec = await riAsync(['payments', 'reconcile', '--days', '1'], {
      STATE_URL: `sqlite:${service.ctx.statePath}`,
      X402_EVM_RPC_URL: chain.rpcUrl,
      X402_PAY_TO_EVM: PAY_TO,
      X402_NETWORKS: 'base-sepolia',
    });
    expect(rec.status).toBe(3);
    expect(rec.stderr).toMatch(
      /1 transfer\(s\) without a settled row, 1 settled row\(s\) without a transfer/,
    );
    expect(rec.stdout).toContain(
      `transfer-without-settled-row\t${settled.transaction}\t${PAYER.address}\t50000\t${nonceOf(stray)}`,
    );
    expect(rec.stdout).toContain('settled-row-without-transfer\tghost-row');

    // The serving process finds the same, and /metrics counts it.
    await service.ctx.payments.reconcile();
    const metrics = await (await fetch(`${service.server.base}/metrics`)).text();
    expect(metrics).toMatch(/x402_ledger_mismatches\{kind="transfer_without_settled_row"\} 1/);
    expect(metrics).toMatch(/x402_ledger_mismatches\{kind="settled_row_without_transfer"\} 1/);
  });
});

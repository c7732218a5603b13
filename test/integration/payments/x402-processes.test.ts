import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_KEYS, type DevChain } from '../../../scripts/dev-chain.mjs';
import type { StateStore } from '../../../src/access/state-store.js';
import { bearer, sampleApp } from '../../helpers/app.js';
import { ri, riBackground, stop } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';
import { PAID_CONFIG, PAY_TO, PAYER, paidSetup, payingFetch } from '../../helpers/x402.js';

let chain: DevChain;
let facilitator: FacilitatorClient;

beforeAll(async () => {
  ({ chain, facilitator } = await paidSetup());
}, 120_000);

afterAll(async () => {
  await chain?.stop();
});

describe('ri serve paid through ri facilitator, over real HTTP', () => {
  it('settles on the local chain and lists the payment with ri payments list', async () => {
    const env = {
      X402_NETWORKS: 'base-sepolia',
      X402_EVM_RPC_URL: chain.rpcUrl,
      X402_FACILITATOR_PRIVATE_KEY: DEV_KEYS.facilitator,
    };
    const fac = riBackground(['facilitator', '--port', '0'], env, /(http:\/\/127\.0\.0\.1:\d+)/);
    const facilitatorUrl = (await fac.started)[1]!;
    const { dataDir } = await sampleDataDir();
    const stateDir = tempDir('ri-paid-state-');
    const serveEnv = {
      X402_NETWORKS: 'base-sepolia',
      X402_PAY_TO_EVM: PAY_TO,
      X402_FACILITATOR_URL: facilitatorUrl,
      STATE_URL: `sqlite:${stateDir}/state.sqlite`,
    };
    const server = riBackground(
      ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
      serveEnv,
      /at (http:\/\/\S+)\/v1/,
    );
    const base = (await server.started)[1]!;
    try {
      const before = await chain.balanceOf(PAYER.address);
      const res = await payingFetch().fetch(`${base}/v1/elements/Fe/history`);
      expect(res.status).toBe(200);
      const receipt = decodePaymentResponseHeader(res.headers.get('payment-response')!);
      expect(receipt.success).toBe(true);
      expect(before - (await chain.balanceOf(PAYER.address))).toBe(50_000n);

      const list = ri(['payments', 'list', '--status', 'settled'], serveEnv);
      expect(list.status).toBe(0);
      const lines = list.stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      const cols = lines[0]!.split('\t');
      expect(cols.slice(1, 7)).toEqual([
        'settled',
        'getElementHistory',
        '0.050000',
        'eip155:84532',
        PAYER.address,
        receipt.transaction,
      ]);
      expect(ri(['payments', 'list', '--status', 'bogus'], serveEnv).status).toBe(2);
    } finally {
      await stop(server.child);
      await stop(fac.child);
    }
  });
});

describe('the crash window between settlement and the ledger write', () => {
  it('answers the paid call, leaves the row pending, and ri payments reconcile settles it from the chain', async () => {
    let crashed = 0;
    const ctx = await sampleApp(PAID_CONFIG, {
      facilitator,
      // The process "dies" right after the facilitator settled: the outcome is never written.
      ledger: (state: StateStore) => ({
        recordPayment: (row) => state.recordPayment(row),
        finishPayment: async () => {
          crashed++;
          throw new Error('killed');
        },
        findPayment: (n, k) => state.findPayment(n, k),
        findPaymentById: (id) => state.findPaymentById(id),
        listPayments: (f) => state.listPayments(f),
      }),
    });
    try {
      const unpaid = await ctx.app.request('/v1/elements/Fe/history');
      const { client } = payingFetch();
      const payload = await client.createPaymentPayload(
        decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!),
      );
      const paid = await ctx.app.request('/v1/elements/Fe/history', {
        headers: { 'payment-signature': encodePaymentSignatureHeader(payload) },
      });
      expect(paid.status).toBe(200);
      expect(crashed).toBe(1);
      const receipt = decodePaymentResponseHeader(paid.headers.get('payment-response')!);
      expect((await ctx.state.listPayments()).map((r) => r.status)).toEqual(['pending']);

      const env = { STATE_URL: `sqlite:${ctx.statePath}`, X402_EVM_RPC_URL: chain.rpcUrl };
      const without = ri(['payments', 'reconcile'], { STATE_URL: `sqlite:${ctx.statePath}` });
      expect(without.status).toBe(0);
      expect(without.stdout).toMatch(/X402_EVM_RPC_URL is not set/);
      const rec = ri(['payments', 'reconcile'], env);
      expect(rec.status).toBe(0);
      expect(rec.stderr).toMatch(/1 settled, 0 failed, 0 left pending/);
      const [row] = await ctx.state.listPayments();
      expect(row).toMatchObject({ status: 'settled', transaction: receipt.transaction });
      // After reconciliation the same request with the same payment is answered again with the
      // first receipt (the answer may have been lost); for another request the payment is refused.
      const again = await ctx.app.request('/v1/elements/Fe/history', {
        headers: { 'payment-signature': encodePaymentSignatureHeader(payload) },
      });
      expect(again.status).toBe(200);
      expect(decodePaymentResponseHeader(again.headers.get('payment-response')!).transaction).toBe(
        receipt.transaction,
      );
      const replay = await ctx.app.request('/v1/elements/Co/history', {
        headers: { 'payment-signature': encodePaymentSignatureHeader(payload) },
      });
      expect(replay.status).toBe(402);
      expect((await ctx.app.request('/v1/elements/Fe', bearer(ctx.keys.free))).status).toBe(200);
    } finally {
      await ctx.close();
    }
  });
});

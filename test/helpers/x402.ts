import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Hono } from 'hono';
import { parseAbiItem } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { expect } from 'vitest';
import { BASE_SEPOLIA_USDC, DEV_KEYS, type DevChain, startDevChain } from '../../scripts/dev-chain.mjs';
import type { PaymentRow } from '../../src/access/payment-ledger.js';
import { serviceListener } from '../../src/http/server.js';
import { evmChainReader } from '../../src/payments/evm-chain.js';
import { localFacilitator } from '../../src/payments/local-facilitator.js';
import { compareLedgerWithChain } from '../../src/payments/reconcile.js';
import { sampleApp } from './app.js';

export const PAYER = privateKeyToAccount(DEV_KEYS.payer);
export const PAY_TO = privateKeyToAccount(DEV_KEYS.payTo).address;

/** The local chain with the payer funded, and an in-process facilitator settling on it. */
export async function paidSetup(fundAtomic = 10_000_000n) {
  const chain: DevChain = await startDevChain();
  await chain.fund(PAYER.address, fundAtomic);
  const facilitator = localFacilitator({
    rpcUrl: chain.rpcUrl,
    privateKey: DEV_KEYS.facilitator,
    networks: ['base-sepolia'],
  });
  return { chain, facilitator };
}

/** The configuration a service taking payments on the local chain runs with. */
export const PAID_CONFIG = { X402_NETWORKS: ['base-sepolia' as const], X402_PAY_TO_EVM: PAY_TO };

/** The official x402 fetch client, paying as PAYER. */
export function payingFetch() {
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: PAYER });
  return { client, fetch: wrapFetchWithPayment(fetch, client) };
}

/**
 * Serves an app over real HTTP on a loopback port (a free one by default); the service's app as
 * `ri serve` does (through the fast path, server.ts), any other app through @hono/node-server.
 */
export async function listen(app: Hono<never>, port = 0): Promise<{ base: string; close(): Promise<void> }> {
  const server = createServer(
    'fastPath' in app
      ? serviceListener(app as unknown as Parameters<typeof serviceListener>[0], { publicUrl: '' })
      : getRequestListener(app.fetch),
  );
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const bound = (server.address() as { port: number }).port;
  return {
    base: `http://127.0.0.1:${bound}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A free loopback port (to give an app its PUBLIC_URL before it listens). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createNetServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** The sample app served over real HTTP at an address that is also its PUBLIC_URL (links in answers work). */
export async function servedSample(
  overrides: Parameters<typeof sampleApp>[0] = {},
  options: Parameters<typeof sampleApp>[1] = {},
) {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const ctx = await sampleApp({ PUBLIC_URL: publicUrl, publicUrl, ...overrides }, options);
  const server = await listen(ctx.app as never, port);
  return {
    ctx,
    server,
    close: async () => {
      await server.close();
      await ctx.close();
    },
  };
}

/** A service taking payments on the local chain, served over real HTTP, with the chain and facilitator. */
export async function paidService() {
  const { chain, facilitator } = await paidSetup();
  const served = await servedSample(PAID_CONFIG, { facilitator });
  return {
    chain,
    facilitator,
    ...served,
    close: async () => {
      await served.close();
      await chain.stop();
    },
  };
}

/**
 * The ledger against the chain: the USDC transfers to the service's address are exactly the
 * transactions of the settled rows (no payment taken without a settled row, no settled row without
 * a transfer). Rows from all the ledgers given (several apps may share one chain).
 */
export async function expectLedgerMatchesChain(
  chain: DevChain,
  ledgers: readonly {
    listPayments(): Promise<
      { status: string; transaction: string | null; payloadHash?: string; dataVersion?: string | null }[]
    >;
  }[],
): Promise<void> {
  const logs = await chain.client.getLogs({
    address: BASE_SEPOLIA_USDC,
    event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'),
    args: { to: PAY_TO },
    fromBlock: 0n,
    toBlock: 'latest',
  });
  const onChain = logs.map((l) => l.transactionHash.toLowerCase()).sort();
  const settled: string[] = [];
  for (const ledger of ledgers)
    for (const row of await ledger.listPayments())
      if (row.status === 'settled') {
        settled.push((row.transaction ?? '').toLowerCase());
        // Deliverable: the same signed payment can ask for its answer again, from the data it bought.
        expect([row.transaction, row.payloadHash?.length, row.dataVersion]).toEqual([
          row.transaction,
          64,
          expect.stringMatching(/^[0-9a-f]{16}$/),
        ]);
      }
  expect(settled.sort()).toEqual(onChain);
  // And as the service's own reconcile sees it: the chain reader's transfers against every row.
  const rows: PaymentRow[] = [];
  for (const ledger of ledgers) rows.push(...((await ledger.listPayments()) as PaymentRow[]));
  const transfers = await evmChainReader(chain.rpcUrl).transfersTo(BASE_SEPOLIA_USDC, PAY_TO, 0);
  expect(transfers.map((t) => t.transaction.toLowerCase()).sort()).toEqual(onChain);
  expect(compareLedgerWithChain(rows, transfers, 0)).toEqual({
    transfersWithoutRow: [],
    settledWithoutTransfer: [],
  });
}

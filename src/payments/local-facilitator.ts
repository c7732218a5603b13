import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { Network, SupportedResponse } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createWalletClient, defineChain, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { NETWORKS, type NetworkName } from './networks.js';

export interface LocalFacilitatorOptions {
  /** The EVM chain's JSON-RPC endpoint (anvil in development and tests). */
  rpcUrl: string;
  /** The facilitator's own key: it submits the settlement transactions and pays their gas. */
  privateKey: `0x${string}`;
  /** EVM networks it settles; the chain at rpcUrl must have their chain id. */
  networks: readonly NetworkName[];
}

/**
 * An x402 facilitator in this process (the reference x402Facilitator with the `exact` EVM
 * scheme), settling on the chain at rpcUrl: for development, tests and `ri facilitator`.
 * Mainnet settlement belongs to a hosted or self-run facilitator reached by X402_FACILITATOR_URL.
 */
export function localFacilitator(options: LocalFacilitatorOptions): FacilitatorClient & { address: string } {
  const evm = options.networks.filter((n) => NETWORKS[n].family === 'evm');
  if (evm.length === 0)
    throw new Error('the local facilitator settles EVM networks only (base, base-sepolia)');
  const chainId = Number(NETWORKS[evm[0]!].caip2.split(':')[1]);
  const chain = defineChain({
    id: chainId,
    name: NETWORKS[evm[0]!].label,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [options.rpcUrl] } },
  });
  const account = privateKeyToAccount(options.privateKey);
  // Receipts polled every 250 ms (viem polls a chain it does not know every 4 s); a local chain mines at once.
  const client = createWalletClient({
    account,
    chain,
    transport: http(options.rpcUrl),
    pollingInterval: 250,
  }).extend(publicActions);
  const signer = toFacilitatorEvmSigner(
    { ...client, address: account.address } as unknown as Parameters<typeof toFacilitatorEvmSigner>[0],
    { confirmationTimeoutMs: 30_000 },
  );
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, {
    signer,
    networks: evm.map((n) => NETWORKS[n].caip2 as Network),
  });
  return {
    address: account.address,
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    // x402Facilitator answers synchronously; the client interface is async.
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}

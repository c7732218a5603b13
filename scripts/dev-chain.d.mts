// Types of scripts/dev-chain.mjs, for the tests that import it.
import type { PublicClient } from 'viem';

export declare const BASE_SEPOLIA_USDC: '0x036CbD53842c5426634e7929541eC2318f3dCF7e';

export declare const DEV_KEYS: {
  readonly facilitator: `0x${string}`;
  readonly payer: `0x${string}`;
  readonly payTo: `0x${string}`;
};

export interface DevChain {
  rpcUrl: string;
  client: PublicClient;
  /** Mints test USDC (atomic units) to an address. */
  fund(address: `0x${string}`, atomic: bigint): Promise<void>;
  balanceOf(address: `0x${string}`): Promise<bigint>;
  stop(): Promise<void>;
}

export declare function startDevChain(): Promise<DevChain>;

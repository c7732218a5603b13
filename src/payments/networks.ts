import type { NETWORK_NAMES } from '../config/config.js';

interface Network {
  caip2: string;
  family: 'evm' | 'svm';
  label: string;
}

/**
 * The networks a per-call payment can use: USDC on Base and on Solana, each with its test
 * network. Named in configuration by these short names; in x402 terms by their CAIP-2 ids.
 */
export const NETWORKS = {
  base: { caip2: 'eip155:8453', family: 'evm', label: 'Base' },
  'base-sepolia': { caip2: 'eip155:84532', family: 'evm', label: 'Base Sepolia (test)' },
  solana: { caip2: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', family: 'svm', label: 'Solana' },
  'solana-devnet': {
    caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
    family: 'svm',
    label: 'Solana devnet (test)',
  },
} as const satisfies Record<(typeof NETWORK_NAMES)[number], Network>;

export type NetworkName = keyof typeof NETWORKS;

export function networkByCaip2(caip2: string): NetworkName | undefined {
  return (Object.keys(NETWORKS) as NetworkName[]).find((n) => NETWORKS[n].caip2 === caip2);
}

/** USDC has 6 decimals: 0.01 USD is "10000" atomic units. */
export const USDC_DECIMALS = 6;

/** USD to USDC atomic units, exactly (prices are whole cents or finer, never floats summed). */
export function usdToAtomic(usd: number): string {
  return String(Math.round(usd * 10 ** USDC_DECIMALS));
}

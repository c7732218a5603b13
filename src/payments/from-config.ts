import type { FacilitatorClient } from '@x402/core/server';
import type { Network } from '@x402/core/types';
import { getDefaultAsset as evmDefaultAsset } from '@x402/evm';
import { getDefaultAsset as svmDefaultAsset } from '@x402/svm';
import type { PaymentLedger } from '../access/payment-ledger.js';
import { loadIoredis } from '../access/rate-limiter.js';
import type { Config } from '../config/config.js';
import { evmChainReader } from './evm-chain.js';
import { httpFacilitator } from './facilitator.js';
import { NETWORKS } from './networks.js';
import { MemoryNonceLock, type NonceLock, RedisNonceLock } from './nonce-lock.js';
import { PaymentService } from './payment-service.js';
import type { ChainReaders, Watch } from './reconcile.js';
import { svmChainReader } from './svm-chain.js';

/**
 * The payment service the configuration asks for: the networks of X402_NETWORKS that have a payTo,
 * the facilitator at X402_FACILITATOR_URL (or the one given, in tests and development), nonce
 * locks in Redis when REDIS_URL is set. With no payTo set, payments are off.
 */
export function paymentsFromConfig(
  config: Config,
  ledger: PaymentLedger,
  options: {
    facilitator?: FacilitatorClient;
    log?: (msg: string, fields?: Record<string, unknown>) => void;
    /** The service's clock (tests move it past the settle deadline instead of waiting). */
    now?: () => number;
  } = {},
): PaymentService {
  const on = Boolean(config.X402_PAY_TO_EVM || config.X402_PAY_TO_SOLANA);
  let locks: NonceLock = new MemoryNonceLock();
  if (on && config.REDIS_URL) {
    const redis = new (loadIoredis().Redis)(config.REDIS_URL, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    redis.on('error', () => {}); // an unreachable Redis falls back to this process's locks
    locks = new RedisNonceLock(redis);
  }
  return new PaymentService({
    networks: config.X402_NETWORKS,
    payTo: { evm: config.X402_PAY_TO_EVM, solana: config.X402_PAY_TO_SOLANA },
    facilitator: options.facilitator ?? httpFacilitator(config.X402_FACILITATOR_URL),
    ledger,
    locks,
    settleDeadlineMs: config.X402_SETTLE_TIMEOUT_SECONDS * 1000,
    chains: chainReaders(config),
    watch: watchOf(config),
    ...(options.log ? { log: options.log } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
}

/** The chain readers of the RPC endpoints configured (X402_EVM_RPC_URL, X402_SOLANA_RPC_URL). */
export function chainReaders(config: Pick<Config, 'X402_EVM_RPC_URL' | 'X402_SOLANA_RPC_URL'>): ChainReaders {
  return {
    ...(config.X402_EVM_RPC_URL ? { evm: evmChainReader(config.X402_EVM_RPC_URL) } : {}),
    ...(config.X402_SOLANA_RPC_URL ? { svm: svmChainReader(config.X402_SOLANA_RPC_URL) } : {}),
  };
}

/**
 * What `reconcile` compares with the chain: each family's payTo and the USDC of its configured
 * networks (contracts on EVM, mints on Solana).
 */
export function watchOf(
  config: Pick<Config, 'X402_NETWORKS' | 'X402_PAY_TO_EVM' | 'X402_PAY_TO_SOLANA'>,
): Watch {
  const assets = (family: 'evm' | 'svm') =>
    config.X402_NETWORKS.filter((n) => NETWORKS[n].family === family).map((n) =>
      family === 'evm'
        ? evmDefaultAsset(NETWORKS[n].caip2 as Network).asset
        : svmDefaultAsset(NETWORKS[n].caip2 as Network).asset,
    );
  return {
    ...(config.X402_PAY_TO_EVM ? { evm: { payTo: config.X402_PAY_TO_EVM, assets: assets('evm') } } : {}),
    ...(config.X402_PAY_TO_SOLANA
      ? { svm: { payTo: config.X402_PAY_TO_SOLANA, assets: assets('svm') } }
      : {}),
  };
}

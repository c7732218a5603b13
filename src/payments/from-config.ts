import type { FacilitatorClient } from '@x402/core/server';
import type { Network } from '@x402/core/types';
import type { PaymentLedger } from '../access/payment-ledger.js';
import { loadIoredis } from '../access/rate-limiter.js';
import type { Config } from '../config/config.js';
import { httpFacilitator } from './facilitator.js';
import { NETWORKS } from './networks.js';
import { MemoryNonceLock, type NonceLock, RedisNonceLock } from './nonce-lock.js';
import { PaymentService } from './payment-service.js';
import type { ChainReader, ChainReaders, Watch } from './reconcile.js';

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
  const watch = watchOf(config);
  watch.catch(() => {}); // a library that cannot load fails the comparison that awaits it, not the process
  return new PaymentService({
    networks: config.X402_NETWORKS,
    payTo: { evm: config.X402_PAY_TO_EVM, solana: config.X402_PAY_TO_SOLANA },
    facilitator: options.facilitator ?? httpFacilitator(config.X402_FACILITATOR_URL),
    ledger,
    locks,
    settleDeadlineMs: config.X402_SETTLE_TIMEOUT_SECONDS * 1000,
    chains: chainReaders(config),
    watch,
    ...(options.log ? { log: options.log } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
}

/** The chain readers of the RPC endpoints configured (X402_EVM_RPC_URL, X402_SOLANA_RPC_URL). */
export function chainReaders(config: Pick<Config, 'X402_EVM_RPC_URL' | 'X402_SOLANA_RPC_URL'>): ChainReaders {
  const evm = config.X402_EVM_RPC_URL;
  const svm = config.X402_SOLANA_RPC_URL;
  return {
    ...(evm ? { evm: readerWhenUsed(async () => (await import('./evm-chain.js')).evmChainReader(evm)) } : {}),
    ...(svm ? { svm: readerWhenUsed(async () => (await import('./svm-chain.js')).svmChainReader(svm)) } : {}),
  };
}

/**
 * A chain reader whose client library (viem, @solana/kit: most of a second to import) is loaded
 * at its first read, not at every start.
 */
function readerWhenUsed(make: () => Promise<ChainReader>): ChainReader {
  let reader: Promise<ChainReader> | undefined;
  const loaded = () => {
    reader ??= make();
    return reader;
  };
  return {
    lookup: async (row) => (await loaded()).lookup(row),
    transfersTo: async (asset, payTo, sinceMs) => (await loaded()).transfersTo(asset, payTo, sinceMs),
    serves: async (network) => {
      const r = await loaded();
      return r.serves ? r.serves(network) : true;
    },
  };
}

/**
 * What `reconcile` compares with the chain: each family's payTo and the USDC of its configured
 * networks (contracts on EVM, mints on Solana).
 */
export async function watchOf(
  config: Pick<Config, 'X402_NETWORKS' | 'X402_PAY_TO_EVM' | 'X402_PAY_TO_SOLANA'>,
): Promise<Watch> {
  // The reference libraries' default assets, loaded only for a family that is paid to.
  const assets = async (family: 'evm' | 'svm') => {
    const { getDefaultAsset } = family === 'evm' ? await import('@x402/evm') : await import('@x402/svm');
    return config.X402_NETWORKS.filter((n) => NETWORKS[n].family === family).map(
      (n) => getDefaultAsset(NETWORKS[n].caip2 as Network).asset,
    );
  };
  return {
    ...(config.X402_PAY_TO_EVM
      ? { evm: { payTo: config.X402_PAY_TO_EVM, assets: await assets('evm') } }
      : {}),
    ...(config.X402_PAY_TO_SOLANA
      ? { svm: { payTo: config.X402_PAY_TO_SOLANA, assets: await assets('svm') } }
      : {}),
  };
}

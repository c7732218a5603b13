import type { FacilitatorClient } from '@x402/core/server';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { SettleError, type SupportedResponse } from '@x402/core/types';
import { NETWORKS, type NetworkName } from './networks.js';

/** How long a verify (or the supported kinds) may take before the payment is answered 503 payment_unavailable. */
export const FACILITATOR_TIMEOUT_MS = 10_000;

/**
 * How long a settle request to the facilitator stays open: the payment's whole validity (the
 * terms' 300 s), so a late answer is still recorded although the payer was told `pending` at
 * X402_SETTLE_TIMEOUT_SECONDS. Aborting it earlier would turn a slow settlement into an unknown one.
 */
const SETTLE_REQUEST_TIMEOUT_MS = 300_000;

/** The facilitator over HTTP (X402_FACILITATOR_URL; the x402 reference one when unset). */
export function httpFacilitator(url: string | undefined): FacilitatorClient {
  const at = url ? { url } : {};
  const quick = new HTTPFacilitatorClient({ ...at, timeoutMs: FACILITATOR_TIMEOUT_MS });
  const settling = new HTTPFacilitatorClient({ ...at, timeoutMs: SETTLE_REQUEST_TIMEOUT_MS });
  return {
    verify: (...args) => quick.verify(...args),
    settle: (...args) => settling.settle(...args),
    getSupported: () => quick.getSupported(),
  };
}

/**
 * A settlement whose outcome is not known: the facilitator did not answer in time, dropped the
 * connection, answered 5xx, or said the transaction is broadcast but not confirmed. The transfer
 * may have happened: the ledger row stays `pending` until the chain (or a later answer) says.
 */
class SettlementUnknown extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'SettlementUnknown';
  }
}

/**
 * What a settle call's failure means. `failed` only when the facilitator itself answered that the
 * settlement did not happen (a 4xx, or a 200 with success false): nothing moved. Anything else
 * (no answer, a 5xx, a transport error, a pending transaction) is `unknown`.
 */
export function settleFailure(error: unknown): { outcome: 'failed' | 'unknown'; reason: string } {
  if (error instanceof SettlementUnknown) return { outcome: 'unknown', reason: error.reason };
  if (error instanceof SettleError) {
    const reason = error.errorReason ?? error.message;
    // `settlement_pending`: the facilitator broadcast the transaction and has not seen it confirmed.
    if (error.errorReason === 'settlement_pending') return { outcome: 'unknown', reason };
    return { outcome: 'failed', reason };
  }
  return { outcome: 'unknown', reason: (error as Error)?.message ?? String(error) };
}

/**
 * Wraps a facilitator so the service can state its terms while the facilitator cannot be reached:
 * getSupported() falls back to the `exact` scheme on the EVM networks (their terms need nothing
 * from the facilitator). Solana's terms need the facilitator's fee payer, so Solana is offered
 * only once the facilitator has answered. `reachable` says which of the two it is.
 *
 * settle() tells a refusal from an unknown outcome: a SettleError the facilitator answered with a
 * 4xx (or a 200 with success false, which the resource server turns into a SettleError itself) is
 * a refusal; a 5xx, a timeout or a dropped connection becomes SettlementUnknown.
 */
export class ResilientFacilitator implements FacilitatorClient {
  reachable = false;
  /** The networks the facilitator said it supports when it last answered (null: never answered). */
  supported: ReadonlySet<string> | null = null;

  constructor(
    private readonly inner: FacilitatorClient,
    private readonly networks: readonly NetworkName[],
  ) {}

  verify(...args: Parameters<FacilitatorClient['verify']>) {
    return this.inner.verify(...args);
  }

  async settle(...args: Parameters<FacilitatorClient['settle']>) {
    try {
      return await this.inner.settle(...args);
    } catch (e) {
      if (e instanceof SettleError && e.statusCode >= 400 && e.statusCode < 500) throw e;
      if (e instanceof SettleError && e.errorReason !== undefined && e.statusCode < 400) throw e;
      throw new SettlementUnknown(
        e instanceof SettleError
          ? `the facilitator answered ${e.statusCode}: ${e.message}`
          : `no answer from the facilitator: ${(e as Error)?.message ?? String(e)}`,
      );
    }
  }

  async getSupported(): Promise<SupportedResponse> {
    try {
      const supported = await this.inner.getSupported();
      this.reachable = true;
      this.supported = new Set(supported.kinds.map((k) => k.network));
      return supported;
    } catch {
      this.reachable = false;
      return {
        kinds: this.networks
          .filter((n) => NETWORKS[n].family === 'evm')
          .map((n) => ({ x402Version: 2, scheme: 'exact', network: NETWORKS[n].caip2 })),
        extensions: [],
        signers: {},
      };
    }
  }
}

import type { FacilitatorClient } from '@x402/core/server';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { SupportedResponse } from '@x402/core/types';
import { NETWORKS, type NetworkName } from './networks.js';

/** How long a facilitator call may take before the payment is answered 503 payment_unavailable. */
export const FACILITATOR_TIMEOUT_MS = 10_000;

/** The facilitator over HTTP (X402_FACILITATOR_URL; the x402 reference one when unset). */
export function httpFacilitator(url: string | undefined): FacilitatorClient {
  return new HTTPFacilitatorClient({ ...(url ? { url } : {}), timeoutMs: FACILITATOR_TIMEOUT_MS });
}

/**
 * Wraps a facilitator so the service can state its terms while the facilitator cannot be reached:
 * getSupported() falls back to the `exact` scheme on the EVM networks (their terms need nothing
 * from the facilitator). Solana's terms need the facilitator's fee payer, so Solana is offered
 * only once the facilitator has answered. `reachable` says which of the two it is.
 */
export class ResilientFacilitator implements FacilitatorClient {
  reachable = false;

  constructor(
    private readonly inner: FacilitatorClient,
    private readonly networks: readonly NetworkName[],
  ) {}

  verify(...args: Parameters<FacilitatorClient['verify']>) {
    return this.inner.verify(...args);
  }

  settle(...args: Parameters<FacilitatorClient['settle']>) {
    return this.inner.settle(...args);
  }

  async getSupported(): Promise<SupportedResponse> {
    try {
      const supported = await this.inner.getSupported();
      this.reachable = true;
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

import { createHash, randomUUID } from 'node:crypto';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { type FacilitatorClient, x402ResourceServer } from '@x402/core/server';
import {
  type Network,
  type PaymentPayload,
  type PaymentRequired,
  type PaymentRequirements,
  SettleError,
  type SettleResponse,
  VerifyError,
} from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import {
  declarePaymentIdentifierExtension,
  extractAndValidatePaymentIdentifier,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';
import { ExactSvmScheme } from '@x402/svm/exact/server';
import { ResilientFacilitator } from './facilitator.js';
import type { PaymentLedger, PaymentRow } from './ledger.js';
import { NETWORKS, type NetworkName, USDC_DECIMALS, usdToAtomic } from './networks.js';
import { MemoryNonceLock, type NonceLock } from './nonce-lock.js';

/** What a payment is for: the operation of the price table and the URL being answered. */
export interface PaidResource {
  operation: string;
  url: string;
  description: string;
  /**
   * What exactly is asked, when the URL does not say it (MCP: the tool and its arguments). The
   * ledger keeps it (else the URL), and an idempotent retry must ask the same.
   */
  request?: string;
}

/** What the ledger records as answered for a paid resource. */
const answered = (r: PaidResource) => r.request ?? r.url;

/** Why a payment was not taken; each front door turns it into its own answer (402, 503, tool result). */
export type PaymentErrorCode =
  | 'payment_invalid'
  | 'payment_replayed'
  | 'payment_id_conflict'
  | 'payment_unavailable'
  | 'settlement_failed';

export class PaymentError extends Error {
  constructor(
    readonly code: PaymentErrorCode,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'PaymentError';
  }
}

/** A payment checked by the facilitator and held (its nonce locked) until settled or released. */
export interface VerifiedPayment {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  resource: PaidResource;
  payer: string;
  /** Ledger key of the authorization: network + nonce. */
  network: string;
  nonce: string;
  /** The client's payment identifier (x402 payment-identifier extension), when it sent one. */
  paymentId: string | null;
  /**
   * A retry of a payment that already bought this same answer (same payment, same identifier,
   * same URL): answered again and never charged again; settle() gives back the first receipt.
   */
  repeat?: PaymentRow;
}

export interface PaymentServiceOptions {
  networks: readonly NetworkName[];
  payTo: { evm?: string | undefined; solana?: string | undefined };
  facilitator: FacilitatorClient;
  ledger: PaymentLedger;
  locks?: NonceLock;
  /** How long a signed payment stays valid (the terms' maxTimeoutSeconds). */
  maxTimeoutSeconds?: number;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** The facilitator's supported kinds are asked again this often while it cannot be reached. */
const RETRY_SUPPORTED_MS = 30_000;

/**
 * Pay per call with x402, for every front door (REST and MCP): the terms of a price, and the
 * payment cycle verify -> (the caller computes the answer) -> settle, or release when the answer
 * failed so nothing is charged. Built on the x402 reference resource server; the ledger and the
 * nonce lock make one payment buy one answer.
 */
export class PaymentService {
  /** Networks with a payTo: empty means payments are off. */
  readonly offered: NetworkName[];
  private readonly server: x402ResourceServer;
  private readonly facilitator: ResilientFacilitator;
  private readonly locks: NonceLock;
  private readonly maxTimeoutSeconds: number;
  private initialized: Promise<void> | null = null;
  private initializedAt = 0;
  private readonly terms = new Map<string, Promise<PaymentRequirements[]>>();

  constructor(private readonly options: PaymentServiceOptions) {
    this.offered = options.networks.filter((n) =>
      NETWORKS[n].family === 'evm' ? Boolean(options.payTo.evm) : Boolean(options.payTo.solana),
    );
    this.facilitator = new ResilientFacilitator(options.facilitator, this.offered);
    this.server = new x402ResourceServer(this.facilitator);
    for (const n of this.offered) {
      this.server.register(
        NETWORKS[n].caip2 as Network,
        NETWORKS[n].family === 'evm' ? new ExactEvmScheme() : new ExactSvmScheme(),
      );
    }
    this.locks = options.locks ?? new MemoryNonceLock();
    this.maxTimeoutSeconds = options.maxTimeoutSeconds ?? 300;
  }

  get enabled(): boolean {
    return this.offered.length > 0;
  }

  /** The x402 PaymentRequired for a price: one `exact` USDC offer per network that can take it. */
  async paymentRequired(usd: number, resource: PaidResource, error?: string): Promise<PaymentRequired> {
    const accepts = await this.requirements(usd);
    return {
      x402Version: 2,
      ...(error ? { error } : {}),
      resource: { url: resource.url, description: resource.description, mimeType: 'application/json' },
      accepts,
      // Optional idempotency: a client that sends an id may retry the same paid call safely.
      extensions: { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) },
    };
  }

  /**
   * Checks a payment (the PAYMENT-SIGNATURE header, or the object or base64 string MCP carries)
   * against the terms of `usd` and holds its nonce. Throws PaymentError.
   */
  async verify(sent: unknown, usd: number, resource: PaidResource): Promise<VerifiedPayment> {
    const payload = decodePayment(sent);
    const requirements = this.server.findMatchingRequirements(await this.requirements(usd), payload);
    if (!requirements) {
      throw new PaymentError(
        'payment_invalid',
        `the payment does not match these terms (${usd} USD in USDC on ${this.offered.join(' or ')}, to this service's address)`,
      );
    }
    const network = requirements.network;
    const nonce = nonceOf(payload);
    const paymentId = paymentIdOf(payload);
    const used = await this.options.ledger.findPayment(network, nonce);
    if (used) {
      const repeat = repeatOf(used, paymentId, resource);
      return { payload, requirements, resource, payer: used.payer, network, nonce, paymentId, repeat };
    }
    if (paymentId !== null && (await this.options.ledger.findPaymentById(paymentId))) {
      throw new PaymentError(
        'payment_id_conflict',
        `the payment identifier ${paymentId} was already used with another payment: a retry must send the same payment, and a new payment needs a new identifier`,
      );
    }
    if (!(await this.locks.acquire(`${network}:${nonce}`, this.maxTimeoutSeconds * 1000)))
      throw new PaymentError('payment_replayed', 'this payment is already being used by another request');
    try {
      const result = await this.server.verifyPayment(payload, requirements);
      if (!result.isValid) {
        throw new PaymentError(
          'payment_invalid',
          result.invalidMessage ?? result.invalidReason ?? 'invalid payment',
        );
      }
      return {
        payload,
        requirements,
        resource,
        payer: result.payer ?? payerOf(payload),
        network,
        nonce,
        paymentId,
      };
    } catch (e) {
      await this.locks.release(`${network}:${nonce}`);
      if (e instanceof PaymentError) throw e;
      if (e instanceof VerifyError)
        throw new PaymentError('payment_invalid', e.invalidMessage ?? e.invalidReason ?? 'invalid payment');
      this.options.log?.('x402 verify failed', { err: (e as Error).message });
      throw new PaymentError('payment_unavailable', 'the payment facilitator cannot be reached');
    }
  }

  /**
   * Settles a verified payment once its answer succeeded: the ledger row first (pending), then the
   * facilitator, then the outcome. Throws PaymentError (settlement_failed, payment_replayed): the
   * answer must then not be sent.
   */
  async settle(v: VerifiedPayment): Promise<SettleResponse> {
    if (v.repeat) {
      return {
        success: true,
        payer: v.repeat.payer,
        transaction: v.repeat.transaction ?? '',
        network: v.network as Network,
      };
    }
    const id = randomUUID();
    const row = {
      id,
      operation: v.resource.operation,
      resource: answered(v.resource),
      amount: v.requirements.amount,
      network: v.network,
      asset: v.requirements.asset,
      payer: v.payer,
      nonce: v.nonce,
      paymentId: v.paymentId,
    };
    // The state store failing here (state_unavailable) settles nothing: the payment may be sent again.
    const recorded = await this.options.ledger.recordPayment(row).catch(async (e: unknown) => {
      await this.locks.release(`${v.network}:${v.nonce}`);
      throw e;
    });
    if (!recorded) throw new PaymentError('payment_replayed', 'this payment has already bought an answer');
    let result: SettleResponse;
    try {
      result = await this.server.settlePayment(v.payload, v.requirements);
    } catch (e) {
      result = {
        success: false,
        errorReason:
          e instanceof SettleError ? (e.errorReason ?? 'settlement failed') : 'facilitator unreachable',
        transaction: '',
        network: v.network as Network,
      };
      this.options.log?.('x402 settle failed', { err: (e as Error).message, payment: id });
    }
    if (!result.success) {
      await this.options.ledger.finishPayment(id, {
        status: 'failed',
        error: result.errorReason ?? 'unknown',
      });
      await this.locks.release(`${v.network}:${v.nonce}`);
      throw new PaymentError(
        'settlement_failed',
        `the payment could not be settled: ${result.errorReason ?? 'unknown'}`,
      );
    }
    // The payment is taken: the answer goes out even if the ledger cannot be written now (the row
    // stays pending, and `ri payments reconcile` finds the transaction on chain).
    await this.options.ledger
      .finishPayment(id, { status: 'settled', transaction: result.transaction })
      .catch((e) =>
        this.options.log?.('x402 ledger write failed after settlement; run `ri payments reconcile`', {
          err: (e as Error).message,
          payment: id,
        }),
      );
    return result;
  }

  /** The answer failed: nothing is charged, and the same payment may be sent again. */
  async release(v: VerifiedPayment): Promise<void> {
    if (v.repeat) return;
    await this.locks.release(`${v.network}:${v.nonce}`);
  }

  async close(): Promise<void> {
    await this.locks.close?.();
  }

  /** The requirements of a price, built once per price (and again after the facilitator comes back). */
  private async requirements(usd: number): Promise<PaymentRequirements[]> {
    await this.ensureInitialized();
    const key = usdToAtomic(usd);
    let built = this.terms.get(key);
    if (!built) {
      built = this.build(usd);
      this.terms.set(key, built);
    }
    return built;
  }

  private async build(usd: number): Promise<PaymentRequirements[]> {
    const all: PaymentRequirements[] = [];
    for (const n of this.offered) {
      const payTo = NETWORKS[n].family === 'evm' ? this.options.payTo.evm! : this.options.payTo.solana!;
      try {
        all.push(
          ...(await this.server.buildPaymentRequirements({
            scheme: 'exact',
            network: NETWORKS[n].caip2 as Network,
            payTo,
            // A money string: the reference scheme picks the network's USDC and its EIP-712 domain.
            price: `$${Number(usdToAtomic(usd)) / 10 ** USDC_DECIMALS}`,
            maxTimeoutSeconds: this.maxTimeoutSeconds,
          })),
        );
      } catch {
        // Not offered until the facilitator says it supports it (Solana needs its fee payer).
      }
    }
    return all;
  }

  private ensureInitialized(): Promise<void> {
    const stale = !this.facilitator.reachable && Date.now() - this.initializedAt > RETRY_SUPPORTED_MS;
    if (!this.initialized || (stale && this.initializedAt > 0)) {
      // A facilitator that cannot be reached leaves only what needs nothing from it (or nothing):
      // never a rejected promise kept for good, so it is asked again after RETRY_SUPPORTED_MS.
      this.initialized = this.server
        .initialize()
        .catch((e) => {
          this.options.log?.('x402 facilitator supported kinds unavailable', { err: (e as Error).message });
        })
        .then(() => {
          this.initializedAt = Date.now();
          this.terms.clear();
        });
    }
    return this.initialized;
  }
}

/** A payment as sent: base64 JSON (HTTP header, some MCP clients) or the object itself (MCP _meta). */
export function decodePayment(sent: unknown): PaymentPayload {
  let payload: unknown = sent;
  if (typeof sent === 'string') {
    try {
      payload = decodePaymentSignatureHeader(sent.trim());
    } catch {
      throw new PaymentError(
        'payment_invalid',
        'the payment is not base64-encoded JSON of an x402 PaymentPayload',
      );
    }
  }
  const p = payload as Partial<PaymentPayload> | null;
  if (
    !p ||
    typeof p !== 'object' ||
    p.x402Version !== 2 ||
    typeof p.accepted !== 'object' ||
    !p.accepted ||
    typeof p.payload !== 'object' ||
    !p.payload
  )
    throw new PaymentError('payment_invalid', 'the payment is not an x402 version 2 PaymentPayload');
  return p as PaymentPayload;
}

/** The payment-identifier extension's id, validated by the reference library; null when none was sent. */
function paymentIdOf(payload: PaymentPayload): string | null {
  const { id, validation } = extractAndValidatePaymentIdentifier(payload);
  if (!validation.valid) {
    throw new PaymentError(
      'payment_invalid',
      `the payment identifier is not valid: ${(validation.errors ?? []).join('; ')} (16-128 letters, digits, '-' or '_')`,
    );
  }
  return id;
}

/**
 * A payment already in the ledger may be answered again only as an idempotent retry (x402
 * payment-identifier): the same identifier on the same payment for the same URL, once settled.
 * A retry may follow an answer that never arrived (a replica killed after settling). Anything else
 * is a replay, refused.
 */
function repeatOf(used: PaymentRow, paymentId: string | null, resource: PaidResource): PaymentRow {
  if (paymentId === null || used.paymentId !== paymentId || used.resource !== answered(resource))
    throw new PaymentError('payment_replayed', 'this payment has already bought an answer');
  if (used.status === 'failed')
    throw new PaymentError('payment_replayed', 'this payment could not be settled before; sign a new one');
  if (used.status === 'pending') {
    throw new PaymentError(
      'payment_replayed',
      'this payment is still being settled; retry with the same payment and identifier in a few seconds',
    );
  }
  return used;
}

/** What identifies a signed payment: the EIP-3009 authorization (payer and nonce), else a hash of the signed content. */
export function nonceOf(payload: PaymentPayload): string {
  const auth = (payload.payload as { authorization?: { from?: unknown; nonce?: unknown } }).authorization;
  if (auth && typeof auth.from === 'string' && typeof auth.nonce === 'string')
    return `${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}`;
  return createHash('sha256').update(JSON.stringify(payload.payload)).digest('hex');
}

function payerOf(payload: PaymentPayload): string {
  const auth = (payload.payload as { authorization?: { from?: unknown } }).authorization;
  return typeof auth?.from === 'string' ? auth.from : 'unknown';
}

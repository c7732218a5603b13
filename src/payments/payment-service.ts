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
import {
  declarePaymentIdentifierExtension,
  extractAndValidatePaymentIdentifier,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';
import type { PaymentLedger, PaymentRow } from '../access/payment-ledger.js';
import { usdText } from '../access/policy.js';
import { ServiceError } from '../core/errors.js';
import { canonicalJson } from '../util/canonical-json.js';
import { ResilientFacilitator, settleFailure } from './facilitator.js';
import { NETWORKS, type NetworkName, networkByCaip2, USDC_DECIMALS, usdToAtomic } from './networks.js';
import { MemoryNonceLock, type NonceLock } from './nonce-lock.js';
import {
  type AuthorizationState,
  type ChainReader,
  type ChainReaders,
  expired,
  type LedgerRef,
  type Mismatches,
  RECONCILE_EVERY_MS,
  readableBy,
  reconcilePayments,
  unusedForGood,
  type Watch,
} from './reconcile.js';
import { svmNonce, svmPaymentOf } from './svm-nonce.js';
import { acceptedMismatch, authorizationMismatch, mismatchText, resourceMismatch } from './terms-check.js';

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
  /** The snapshot the answer is computed from: kept in the ledger, so a retry gets the same data. */
  dataVersion?: string;
}

/** What the ledger records as answered for a paid resource. */
const answered = (r: PaidResource) => r.request ?? r.url;

/** Why a payment was not taken; each front door turns it into its own answer (402, 503, tool result). */
export type PaymentErrorCode =
  | 'payment_invalid'
  | 'payment_terms_mismatch'
  | 'payment_replayed'
  | 'payment_id_conflict'
  | 'payment_unavailable'
  | 'settlement_failed'
  | 'settlement_pending';

export class PaymentError extends Error {
  constructor(
    readonly code: PaymentErrorCode,
    readonly reason: string,
    /** settlement_pending: until when the same request with the same payment can fetch the answer. */
    readonly retryUntil?: string,
    /**
     * Whether the payer may be told that nothing was charged: true for a payment refused before
     * settlement, or one the chain shows unused for good; false whenever money may have moved or did.
     */
    readonly nothingCharged = true,
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
  /** sha256 of the signed payment: a retry must send these very bytes. */
  payloadHash: string;
  /** ISO 8601: the end of the payment's validity (EIP-3009 validBefore, else the terms' timeout). */
  validUntil: string;
  /**
   * A retry of a payment already in the ledger for this same request (the same signed payment,
   * within its validity): answered again from the data it paid for and never charged again;
   * settle() gives back the first receipt once the settlement is known.
   */
  repeat?: PaymentRow;
}

/** What the facilitator answered to one settle request. */
type Attempt =
  | { status: 'settled'; receipt: SettleResponse }
  /** It answered that it did not settle (a 4xx, `success: false`): its word only, the chain decides. */
  | { status: 'refused'; reason: string }
  /** No answer, a 5xx, a dropped connection, a transaction not yet confirmed. */
  | { status: 'unknown'; reason: string };

/** How a settlement ended, as the chain and the facilitator together tell it. */
type Outcome =
  | { status: 'settled'; receipt: SettleResponse }
  /** The chain shows the authorization unused and past its validity: nothing moved, and nothing can. */
  | { status: 'failed'; reason: string }
  /** The facilitator refused and the chain shows no transfer (yet): the row stays pending until the payment expires. */
  | { status: 'refused'; reason: string }
  | { status: 'unknown'; reason: string };

/**
 * A settled payment's answer may be asked for again with the same payment this long after its
 * settlement (or after its validity, whichever is later): a payer whose answer never arrived
 * (a dropped connection, a 503 settlement_pending) comes back within a day and still gets it.
 */
export const REDEEM_MS = 24 * 60 * 60 * 1000;

/**
 * After a facilitator's refusal, the chain is watched this long before the payer is told that
 * nothing moved: a facilitator that lost its RPC node's answer may have broadcast the transfer,
 * which a live chain mines within a block or two.
 */
const REFUSAL_WATCH_MS = 3_000;

/** While a settlement is open, the chain is read this often (at most; a quarter of the deadline when shorter). */
const CHAIN_POLL_MS = 1_000;

export interface PaymentServiceOptions {
  networks: readonly NetworkName[];
  payTo: { evm?: string | undefined; solana?: string | undefined };
  facilitator: FacilitatorClient;
  ledger: PaymentLedger;
  locks?: NonceLock;
  /** How long a signed payment stays valid (the terms' maxTimeoutSeconds). */
  maxTimeoutSeconds?: number;
  /** How long a payer waits for a settlement before the answer says it is pending (X402_SETTLE_TIMEOUT_SECONDS). */
  settleDeadlineMs?: number;
  /**
   * The chains' record of what was paid, by family: EIP-3009 authorizations (X402_EVM_RPC_URL),
   * Solana transactions (X402_SOLANA_RPC_URL). A row no reader reads stays pending.
   */
  chains?: ChainReaders;
  /** The service's addresses and the tokens it is paid in (compared with the chain by `reconcile`). */
  watch?: Watch | Promise<Watch>;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
  now?: () => number;
}

/** How many URLs' unpaid terms are kept at most (all dropped when full: a bound, not an LRU). */
const UNPAID_KEPT = 1_000;

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
  private schemes: Promise<void> | null = null;
  private initializedAt = 0;
  private readonly terms = new Map<string, Promise<PaymentRequirements[]>>();
  /** The unpaid PaymentRequired of each URL asked for lately (paymentRequired). */
  private readonly unpaid = new Map<string, PaymentRequired>();
  /** Settlements this process has asked for and not yet heard back about, by ledger row id. */
  private readonly inFlight = new Map<string, Promise<Attempt>>();
  /** What the last comparison of the ledger with the chain found (null: not compared yet). */
  mismatches: Mismatches | null = null;
  private readonly settleDeadlineMs: number;
  private readonly now: () => number;
  private background: NodeJS.Timeout | null = null;
  private generation = 0;

  constructor(private readonly options: PaymentServiceOptions) {
    this.offered = options.networks.filter((n) =>
      NETWORKS[n].family === 'evm' ? Boolean(options.payTo.evm) : Boolean(options.payTo.solana),
    );
    this.facilitator = new ResilientFacilitator(options.facilitator, this.offered);
    this.server = new x402ResourceServer(this.facilitator);
    this.locks = options.locks ?? new MemoryNonceLock();
    this.maxTimeoutSeconds = options.maxTimeoutSeconds ?? 300;
    this.settleDeadlineMs = options.settleDeadlineMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.offered.length > 0;
  }

  /**
   * The networks a 402 offers now, and so the only ones discovery states: the facilitator's
   * supported networks once it has answered; before that the EVM ones (their terms need nothing
   * from it; Solana's need its fee payer).
   */
  get offeredNow(): NetworkName[] {
    const supported = this.facilitator.supported;
    return this.offered.filter((n) =>
      supported ? supported.has(NETWORKS[n].caip2) : NETWORKS[n].family === 'evm',
    );
  }

  /** The networks configured but not offered now, and what each waits for. */
  get waiting(): { network: NetworkName; why: string }[] {
    const now = new Set(this.offeredNow);
    return this.offered
      .filter((n) => !now.has(n))
      .map((n) => ({
        network: n,
        why: this.facilitator.supported
          ? 'the facilitator does not support it'
          : `the facilitator (its ${NETWORKS[n].family === 'svm' ? 'fee payer' : 'supported kinds'}), asked again every ${RETRY_SUPPORTED_MS / 1000} s`,
      }));
  }

  /** Changes whenever the terms are built again (the networks offered may have changed). */
  get termsGeneration(): number {
    return this.generation;
  }

  /** Asks the facilitator what it supports (once; again while it cannot be reached). */
  async ready(): Promise<void> {
    await this.ensureInitialized();
  }

  /**
   * The x402 PaymentRequired for a price: one `exact` USDC offer per network that can take it.
   * The unpaid answer is the same for every caller of one URL: kept (the same object, so its
   * encoded header can be kept too) until the terms are built again.
   */
  async paymentRequired(usd: number, resource: PaidResource, error?: string): Promise<PaymentRequired> {
    const accepts = await this.requirements(usd);
    if (error) return this.buildPaymentRequired(accepts, resource, error);
    const key = `${usdToAtomic(usd)}|${resource.url}|${resource.description}`;
    let kept = this.unpaid.get(key);
    if (!kept || kept.accepts !== accepts) {
      if (this.unpaid.size >= UNPAID_KEPT) this.unpaid.clear();
      kept = this.buildPaymentRequired(accepts, resource);
      this.unpaid.set(key, kept);
    }
    return kept;
  }

  private buildPaymentRequired(
    accepts: PaymentRequirements[],
    resource: PaidResource,
    error?: string,
  ): PaymentRequired {
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
    const offers = await this.requirements(usd);
    const requirements = this.server.findMatchingRequirements(offers, payload);
    const mismatches = requirements
      ? [
          ...authorizationMismatch(payload, requirements, Math.floor(this.now() / 1000)),
          ...resourceMismatch(payload, resource.url),
        ]
      : acceptedMismatch(payload.accepted, offers);
    const nonce = nonceOf(payload);
    const payloadHash = payloadHashOf(payload);
    const network0 = payload.accepted.network;
    const used = typeof network0 === 'string' ? await this.options.ledger.findPayment(network0, nonce) : null;
    if (used) {
      // A payment the ledger holds: the retry of its own request (answered from what it bought,
      // even if the terms have changed since), or a replay, refused, whatever else differs.
      const repeat = retryOf(used, payloadHash, resource, this.now());
      return {
        payload,
        requirements: requirements ?? payload.accepted,
        resource,
        payer: used.payer,
        network: used.network,
        nonce,
        paymentId: paymentIdOf(payload),
        payloadHash,
        validUntil: used.validUntil,
        repeat,
      };
    }
    if (!requirements || mismatches.length > 0) {
      throw new PaymentError(
        'payment_terms_mismatch',
        `${mismatchText(mismatches)} (${usdText(usd)} in USDC on ${this.offered.join(' or ')}, to this service's address, valid for at most ${this.maxTimeoutSeconds} s)`,
      );
    }
    const network = requirements.network;
    const paymentId = paymentIdOf(payload);
    const validUntil = this.validUntilOf(payload);
    if (paymentId !== null && (await this.options.ledger.findPaymentById(paymentId)))
      throw paymentIdConflict(paymentId);
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
        payloadHash,
        validUntil,
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
   * The ledger row of an earlier use of this very payment (the same signed bytes), if any: a
   * retry is answered from the data version that payment bought, so the front door pins it before
   * the answer is computed. Null for anything else (verify() then says why it is refused).
   */
  async priorPayment(sent: unknown): Promise<PaymentRow | null> {
    let payload: PaymentPayload;
    try {
      payload = decodePayment(sent);
    } catch {
      return null;
    }
    const row = await this.options.ledger.findPayment(payload.accepted.network, nonceOf(payload));
    return row && row.payloadHash === payloadHashOf(payload) ? row : null;
  }

  /**
   * Settles a verified payment once its answer succeeded: the ledger row first (pending), then the
   * facilitator, then the outcome, which the chain decides whenever the facilitator's answer is
   * anything but a success. Returns the receipt; throws PaymentError, and the answer must then not
   * be sent: `settlement_failed` (the chain shows no transfer: refused, or expired unused),
   * `settlement_pending` (not known within the deadline: the row stays pending, the settlement goes
   * on here and on chain, and the same request with the same payment gets the answer once it is
   * known, charged once), `payment_replayed` or `payment_id_conflict` (another request holds it).
   */
  async settle(v: VerifiedPayment): Promise<SettleResponse> {
    if (v.repeat) return this.answerAgain(v, v.repeat);
    const id = randomUUID();
    const row: PaymentRef = {
      id,
      operation: v.resource.operation,
      resource: answered(v.resource),
      amount: v.requirements.amount,
      network: v.network,
      asset: v.requirements.asset,
      payer: v.payer,
      nonce: v.nonce,
      paymentId: v.paymentId,
      payloadHash: v.payloadHash,
      validUntil: v.validUntil,
      dataVersion: v.resource.dataVersion ?? null,
      // As the store will write it, near enough: the chain is searched from about then.
      createdAt: new Date(this.now()).toISOString(),
    };
    // The state store failing here (state_unavailable) settles nothing: the payment may be sent again.
    const recorded = await this.options.ledger.recordPayment(row).catch(async (e: unknown) => {
      await this.unlock(v);
      throw e;
    });
    if (!recorded) {
      await this.unlock(v);
      // Two new payments with one identifier at once: the other was recorded first.
      const holder = v.paymentId ? await this.options.ledger.findPaymentById(v.paymentId) : null;
      if (holder && holder.nonce !== v.nonce) throw paymentIdConflict(v.paymentId!);
      throw new PaymentError('payment_replayed', 'this payment is already being used by another request');
    }
    return this.told(await this.decide(row, this.submit(id, v)), v, row);
  }

  /** An outcome as the payer is told it: the receipt, or the PaymentError that replaces the answer. */
  private async told(outcome: Outcome, v: VerifiedPayment, row: PaymentRef): Promise<SettleResponse> {
    if (outcome.status === 'settled') return outcome.receipt;
    if (outcome.status === 'failed') {
      await this.unlock(v);
      throw new PaymentError(
        'settlement_failed',
        `the payment was not settled before it expired (${outcome.reason}), and the chain shows it unused; sign a new payment`,
      );
    }
    if (outcome.status === 'refused') {
      await this.unlock(v);
      throw new PaymentError(
        'settlement_failed',
        `the facilitator refused to settle it (${outcome.reason}) and the chain shows no transfer for it; sign a new payment for this answer. Should this payment still be used on chain before it expires (${row.validUntil}), the same request with it gets the answer until ${redeemUntil(row)}`,
        undefined,
        false,
      );
    }
    throw pendingError(outcome.reason, row, this.readerOf(row) ? null : 'this server cannot read the chain');
  }

  /**
   * Asks the facilitator to settle and records a success, however late: the payer may have been
   * told `pending` long before. Any other answer is left to `decide`, which asks the chain.
   */
  private submit(id: string, v: VerifiedPayment): Promise<Attempt> {
    const running = this.inFlight.get(id);
    if (running) return running;
    const attempt = (async (): Promise<Attempt> => {
      try {
        const receipt = await this.server.settlePayment(v.payload, v.requirements);
        // The facilitator answered that it did not settle (or not yet: settlement_pending).
        if (!receipt.success) throw new SettleError(200, receipt);
        // The payment is taken: the answer goes out even if the ledger cannot be written now (the
        // row stays pending, and the chain says what happened).
        await this.options.ledger
          .finishPayment(id, { status: 'settled', transaction: receipt.transaction })
          .catch((e) =>
            this.options.log?.('x402 ledger write failed after settlement; run `ri payments reconcile`', {
              err: (e as Error).message,
              payment: id,
            }),
          );
        return { status: 'settled', receipt };
      } catch (e) {
        const { outcome, reason } = settleFailure(e);
        this.options.log?.(
          outcome === 'failed'
            ? 'x402 facilitator refused the settlement; the chain decides'
            : 'x402 settlement outcome unknown; the payment stays pending',
          { err: reason, payment: id },
        );
        return { status: outcome === 'failed' ? 'refused' : 'unknown', reason };
      }
    })().finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, attempt);
    return attempt;
  }

  /**
   * The outcome of a settlement, within the payer's deadline: the facilitator's success, or else
   * the chain's word. While the facilitator has not answered, the chain is read every poll, so an
   * answer is released as soon as its transfer is seen, whatever the facilitator does; after a
   * refusal it is watched a little longer (REFUSAL_WATCH_MS), since the transfer may still land.
   */
  private async decide(row: PaymentRef, attempt: Promise<Attempt>): Promise<Outcome> {
    const started = Date.now();
    const endAt = started + this.settleDeadlineMs;
    const poll = Math.min(CHAIN_POLL_MS, this.settleDeadlineMs / 4);
    let heard: Attempt | null = null;
    let heardAt = 0;
    const answered = attempt.then((a) => {
      heard = a;
      heardAt = Date.now();
    });
    for (;;) {
      const wait = sleep(Math.max(0, Math.min(poll, endAt - Date.now())));
      await (heard ? wait : Promise.race([answered, wait]));
      const said = heard as Attempt | null;
      if (said?.status === 'settled') return said;
      const chain = await this.readChain(row);
      if (chain?.used) return this.settledOnChain(row, chain.transaction);
      if (chain && unusedForGood(chain, row, this.now())) return this.failedOnChain(row);
      const now = Date.now();
      if (said?.status === 'refused' && chain && (now >= heardAt + REFUSAL_WATCH_MS || now >= endAt))
        return { status: 'refused', reason: said.reason };
      // Nothing more to learn here: the facilitator has answered and the chain cannot be read.
      if ((said && !chain) || now >= endAt)
        return {
          status: 'unknown',
          reason: said?.reason ?? `the facilitator has not answered within ${this.settleDeadlineMs / 1000} s`,
        };
    }
  }

  /** The reader of a row's network family, if this server has one and the row names what it asks by. */
  private readerOf(row: PaymentRef): ChainReader | null {
    const family = readableBy(row);
    return (family && this.options.chains?.[family]) ?? null;
  }

  /** What the chain says of a row's payment; null when it cannot be read (no reader, another network, an error). */
  private async readChain(row: PaymentRef): Promise<AuthorizationState | null> {
    const chain = this.readerOf(row);
    if (!chain) return null;
    try {
      if (chain.serves && !(await chain.serves(row.network))) return null;
      return await chain.lookup(row);
    } catch (e) {
      this.options.log?.('x402 chain lookup failed', { err: (e as Error).message, payment: row.id });
      return null;
    }
  }

  /** The chain shows the authorization used: the row is settled (if no one got there first) and its receipt given. */
  private async settledOnChain(row: PaymentRef, transaction: string | null): Promise<Outcome> {
    await this.options.ledger.finishPayment(row.id, {
      status: 'settled',
      transaction: transaction ?? 'unknown (used on chain)',
    });
    const recorded = await this.options.ledger.findPayment(row.network, row.nonce);
    return {
      status: 'settled',
      receipt: {
        success: true,
        payer: row.payer,
        transaction: recorded?.transaction ?? transaction ?? '',
        network: row.network as Network,
      },
    };
  }

  /** The chain shows the authorization unused and its validity over: nothing moved, and nothing can. */
  private async failedOnChain(row: PaymentRef): Promise<Outcome> {
    const reason = 'not used on chain before the payment expired';
    await this.options.ledger.finishPayment(row.id, { status: 'failed', error: reason });
    return { status: 'failed', reason };
  }

  /**
   * A retry of a payment already in the ledger: its first receipt once settled. A pending one is
   * decided first: by the attempt still running here, else the chain, else the same payment
   * submitted again while it is valid (its nonce allows one transfer at most).
   */
  private async answerAgain(v: VerifiedPayment, first: PaymentRow): Promise<SettleResponse> {
    if (first.status === 'settled') return receiptOf(first, v.network);
    const running = this.inFlight.get(first.id);
    if (running) return this.told(await this.decide(first, running), v, first);
    const chain = await this.readChain(first);
    if (chain?.used) return this.told(await this.settledOnChain(first, chain.transaction), v, first);
    if (expired(first, this.now()))
      return this.told(
        chain && unusedForGood(chain, first, this.now())
          ? await this.failedOnChain(first)
          : { status: 'unknown', reason: 'it was not confirmed settled before it expired' },
        v,
        first,
      );
    return this.told(await this.decide(first, this.submit(first.id, v)), v, first);
  }

  /**
   * Reads the chain for every pending row, those an attempt of this process still waits for
   * included: used -> settled (the payer's retry then gets the answer); unused once the payment
   * has expired -> failed (`ri serve` runs this every 30 s).
   */
  async resolvePending(): Promise<void> {
    const chains = this.options.chains ?? {};
    if (Object.keys(chains).length === 0) return;
    const rows = await this.options.ledger.listPayments({ status: 'pending' });
    if (rows.length === 0) return;
    const report = await reconcilePayments(this.options.ledger, chains, {
      now: this.now(),
      rows,
    });
    if (report.settled.length + report.failed.length > 0)
      this.options.log?.('x402 pending payments resolved from the chain', {
        settled: report.settled.length,
        failed: report.failed.length,
      });
  }

  /**
   * Compares the ledger of the last days with the chain's transfers to the service, both ways,
   * fixes what the chain proves, and keeps what still disagrees for /metrics (`mismatches`).
   */
  async reconcile(): Promise<Mismatches | null> {
    const chains = this.options.chains ?? {};
    const watch = (await this.options.watch) ?? {};
    if (!(Object.keys(watch) as (keyof Watch)[]).some((family) => chains[family])) return null;
    const report = await reconcilePayments(this.options.ledger, chains, { now: this.now(), watch });
    this.mismatches = report.mismatches;
    const found = report.mismatches;
    if (report.settled.length + report.failed.length > 0 || (found && mismatchCount(found) > 0))
      this.options.log?.('x402 ledger compared with the chain', {
        settled: report.settled.length,
        failed: report.failed.length,
        transfers_without_row: found?.transfersWithoutRow.length ?? 0,
        settled_without_transfer: found?.settledWithoutTransfer.length ?? 0,
      });
    return found;
  }

  /**
   * `ri serve`'s background work: while a network waits for the facilitator (Solana needs its fee
   * payer), ask it again; resolve pending settlements from the chain.
   */
  startBackground(intervalMs = RETRY_SUPPORTED_MS): void {
    if (this.background || !this.enabled) return;
    const compare = () =>
      void this.reconcile().catch((e) =>
        this.options.log?.('x402 ledger not compared with the chain', { err: (e as Error).message }),
      );
    compare();
    let lastCompared = Date.now();
    this.background = setInterval(() => {
      if (!this.facilitator.reachable) void this.requirements(0.01).catch(() => {});
      void this.resolvePending().catch((e) =>
        this.options.log?.('x402 pending payments not resolved', { err: (e as Error).message }),
      );
      if (Date.now() - lastCompared >= RECONCILE_EVERY_MS) {
        lastCompared = Date.now();
        compare();
      }
    }, intervalMs);
    this.background.unref();
  }

  /** The answer failed: nothing is charged, and the same payment may be sent again. */
  async release(v: VerifiedPayment): Promise<void> {
    if (v.repeat) return;
    await this.unlock(v);
  }

  private unlock(v: VerifiedPayment): Promise<void> {
    return this.locks.release(`${v.network}:${v.nonce}`);
  }

  async close(): Promise<void> {
    if (this.background) clearInterval(this.background);
    this.background = null;
    await this.locks.close?.();
  }

  /** The end of a payment's validity: EIP-3009's validBefore, else the terms' timeout from now. */
  private validUntilOf(payload: PaymentPayload): string {
    const before = (payload.payload as { authorization?: { validBefore?: unknown } }).authorization
      ?.validBefore;
    const seconds = typeof before === 'string' || typeof before === 'number' ? Number(before) : Number.NaN;
    const ms = Number.isFinite(seconds) ? seconds * 1000 : this.now() + this.maxTimeoutSeconds * 1000;
    return new Date(Math.min(ms, 8.64e15)).toISOString();
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

  /**
   * The reference `exact` scheme of each network offered, registered before the terms are first
   * built (everything that reads them waits for ensureInitialized). Their libraries are loaded
   * then, not at every start: most of a second, for a service that may take no payments.
   */
  private async registerSchemes(): Promise<void> {
    const families = new Set(this.offered.map((n) => NETWORKS[n].family));
    const evm = families.has('evm') ? (await import('@x402/evm/exact/server')).ExactEvmScheme : null;
    const svm = families.has('svm') ? (await import('@x402/svm/exact/server')).ExactSvmScheme : null;
    for (const n of this.offered)
      this.server.register(
        NETWORKS[n].caip2 as Network,
        NETWORKS[n].family === 'evm' ? new evm!() : new svm!(),
      );
  }

  private ensureInitialized(): Promise<void> {
    const stale = !this.facilitator.reachable && Date.now() - this.initializedAt > RETRY_SUPPORTED_MS;
    if (!this.initialized || (stale && this.initializedAt > 0)) {
      // A facilitator that cannot be reached leaves only what needs nothing from it (or nothing):
      // never a rejected promise kept for good, so it is asked again after RETRY_SUPPORTED_MS.
      this.schemes ??= this.registerSchemes();
      this.initialized = this.schemes
        .then(() => this.server.initialize())
        .catch((e) => {
          this.options.log?.('x402 facilitator supported kinds unavailable', { err: (e as Error).message });
        })
        .then(() => {
          this.initializedAt = Date.now();
          this.terms.clear();
          this.generation++;
        });
    }
    return this.initialized;
  }
}

/** A payment as sent: base64 JSON (HTTP header, some MCP clients) or the object itself (MCP _meta). */
function decodePayment(sent: unknown): PaymentPayload {
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
 * A payment already in the ledger may be answered again only as a retry of the same request: the
 * very same signed payment (byte for byte), the same method, path and query (MCP: tool and
 * arguments). A settled one may, until REDEEM_MS after its settlement; a pending one always (the
 * retry is how its payer learns the outcome). Anything else is a replay, refused. A retry follows
 * an answer that never arrived (a dropped connection, a replica killed after settling) or one that
 * said the settlement was pending.
 */
function retryOf(used: PaymentRow, payloadHash: string, resource: PaidResource, now: number): PaymentRow {
  const state =
    used.status === 'settled'
      ? `was settled at ${used.updatedAt} (transaction ${used.transaction ?? 'unknown'})`
      : 'is being settled';
  if (used.payloadHash === '' || used.payloadHash !== payloadHash || used.resource !== answered(resource))
    throw new PaymentError(
      'payment_replayed',
      `this payment has already bought an answer to another request (it ${state}); it is not charged again, and buys nothing more`,
      undefined,
      false,
    );
  if (used.status === 'settled' && now > Date.parse(redeemUntil(used)))
    throw new PaymentError(
      'payment_replayed',
      `this payment ${state}; its answer could be asked for again with it until ${redeemUntil(used)}, which has passed. Sign a new payment for a new answer`,
      undefined,
      false,
    );
  return used;
}

/** Until when a row's answer may be asked for again with the same payment. */
export function redeemUntil(row: Pick<PaymentRow, 'validUntil'> & { updatedAt?: string }): string {
  const from = Math.max(Date.parse(row.validUntil), row.updatedAt ? Date.parse(row.updatedAt) : 0);
  return new Date(Math.min(from + REDEEM_MS, 8.64e15)).toISOString();
}

/** The first receipt of a settled row, given again to a retry. */
function receiptOf(row: PaymentRow, network: string): SettleResponse {
  return { success: true, payer: row.payer, transaction: row.transaction ?? '', network: network as Network };
}

function paymentIdConflict(paymentId: string): PaymentError {
  return new PaymentError(
    'payment_id_conflict',
    `the payment identifier ${paymentId} was already used with another payment: a retry must send the same payment, and a new payment needs a new identifier`,
  );
}

function mismatchCount(m: Mismatches): number {
  return m.transfersWithoutRow.length + m.settledWithoutTransfer.length;
}

/** A ledger row as the settlement code needs it (a new row, or one read back). */
type PaymentRef = LedgerRef;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The answer to a payment whose settlement is not known yet, the same at every front door: `retry`
 * says how that door's client sends the same call again.
 */
export function settlementPendingProblem(
  e: PaymentError,
  retry: string,
  extra: Record<string, unknown> = {},
): ServiceError {
  return new ServiceError(
    'settlement_pending',
    `Your payment was sent for settlement and its outcome is not known yet (${e.reason}); this answer is held until it is. ${retry}${e.retryUntil ? ` (until ${e.retryUntil})` : ''} to receive it once settled: you are charged at most once. Do not sign a new payment for it.`,
    { ...extra, ...(e.retryUntil ? { retry_until: e.retryUntil } : {}) },
    { 'retry-after': '10' },
  );
}

function pendingError(reason: string, row: PaymentRef, unreadable: string | null): PaymentError {
  return new PaymentError(
    'settlement_pending',
    unreadable
      ? `the outcome is not known (${reason}) and ${unreadable} to confirm it`
      : `the outcome is not known yet (${reason})`,
    redeemUntil(row),
    false,
  );
}

/** sha256 of the signed payment in one canonical form (the same bytes whether sent as a header or an object). */
function payloadHashOf(payload: PaymentPayload): string {
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
}

/**
 * What identifies a signed payment: the EIP-3009 authorization (payer and nonce); a Solana
 * transaction's payer, their signature and its blockhash (`svm-nonce.ts`); else a hash of the
 * signed content.
 */
function nonceOf(payload: PaymentPayload): string {
  const auth = (payload.payload as { authorization?: { from?: unknown; nonce?: unknown } }).authorization;
  if (auth && typeof auth.from === 'string' && typeof auth.nonce === 'string')
    return `${auth.from.toLowerCase()}:${auth.nonce.toLowerCase()}`;
  const svm = svmPaymentOfPayload(payload);
  if (svm) return svmNonce(svm);
  return createHash('sha256').update(JSON.stringify(payload.payload)).digest('hex');
}

function payerOf(payload: PaymentPayload): string {
  const auth = (payload.payload as { authorization?: { from?: unknown } }).authorization;
  if (typeof auth?.from === 'string') return auth.from;
  return svmPaymentOfPayload(payload)?.signer ?? 'unknown';
}

/** The Solana payment of a payload on a Solana network; null for any other. */
function svmPaymentOfPayload(payload: PaymentPayload) {
  const transaction = (payload.payload as { transaction?: unknown }).transaction;
  const name = networkByCaip2(String(payload.accepted.network));
  return name && NETWORKS[name].family === 'svm' && typeof transaction === 'string'
    ? svmPaymentOf(transaction)
    : null;
}

/**
 * The payments ledger: one row per paid answer. Written in this order, so a crash at any point
 * leaves a row that says what may have happened:
 *   1. `pending`, before the facilitator is asked to settle (the row's unique key on network and
 *      authorization nonce refuses a payment already used or in flight on another replica);
 *   2. `settled` with the transaction, or `failed` with the reason, after it answered.
 * A row still `pending` after a crash between 1 and 2 is resolved by `ri payments reconcile`.
 * The rows are declared here, beside the state store that keeps them; `src/payments` writes them.
 */
export type PaymentStatus = 'pending' | 'settled' | 'failed';

export interface NewPayment {
  id: string;
  /** The policy table's operation id (getElementHistory, labRun, ...). */
  operation: string;
  /** The URL that was answered. */
  resource: string;
  /** USDC atomic units (6 decimals). */
  amount: string;
  /** CAIP-2 id. */
  network: string;
  /** The token paid in (USDC's address or mint on that network). */
  asset: string;
  payer: string;
  /**
   * Identifies the signed payment: `payer:nonce` on EVM; on Solana `svm:payer:signature:blockhash`
   * (the payer's signature of the transaction; rows from before it hold a hash of the payload).
   */
  nonce: string;
  /** The client's x402 payment-identifier, when it sent one (a new payment reusing it is refused). */
  paymentId?: string | null;
  /** sha256 of the signed payment as sent: only the very same payment may ask for its answer again. */
  payloadHash: string;
  /** ISO 8601: until when the signed payment may be settled (and its answer asked again). */
  validUntil: string;
  /** The snapshot the answer came from: a retry gets the same data, never newer. */
  dataVersion: string | null;
}

export interface PaymentRow extends NewPayment {
  status: PaymentStatus;
  transaction: string | null;
  error: string | null;
  /** ISO 8601, UTC. */
  createdAt: string;
  updatedAt: string;
}

export type PaymentOutcome = { status: 'settled'; transaction: string } | { status: 'failed'; error: string };

export interface PaymentLedger {
  /** False when a pending or settled row already holds this network and nonce (a replay). */
  recordPayment(row: NewPayment): Promise<boolean>;
  /**
   * Moves a row from `from` (default pending) to its outcome; false when it was not in `from`
   * any more (another replica or a reconcile got there first) or another row holds its nonce.
   */
  finishPayment(id: string, outcome: PaymentOutcome, from?: PaymentStatus): Promise<boolean>;
  /** The pending or settled row for this network and nonce, if any. */
  findPayment(network: string, nonce: string): Promise<PaymentRow | null>;
  /** The pending or settled row holding this payment identifier, if any. */
  findPaymentById(paymentId: string): Promise<PaymentRow | null>;
  /** Newest first. */
  listPayments(filter?: { since?: string; status?: PaymentStatus }): Promise<PaymentRow[]>;
}

/**
 * A ledger row as both state stores read it (PostgreSQL gives timestamps as Date): the columns
 * named like the row's fields hold them as they are; the others are snake_case.
 */
export interface PaymentDbRow
  extends Omit<NewPayment, 'paymentId' | 'payloadHash' | 'validUntil' | 'dataVersion'>,
    Pick<PaymentRow, 'status' | 'transaction' | 'error'> {
  payment_id: string | null;
  payload_hash: string | null;
  valid_until: string | Date | null;
  data_version: string | null;
  created_at: string | Date;
  updated_at: string | Date;
}

const LEGACY_VALIDITY_MS = 10 * 60 * 1000;

export function toPaymentRow(r: PaymentDbRow): PaymentRow {
  const iso = (t: string | Date) => (typeof t === 'string' ? t : t.toISOString());
  return {
    id: r.id,
    operation: r.operation,
    resource: r.resource,
    amount: r.amount,
    network: r.network,
    asset: r.asset,
    payer: r.payer,
    nonce: r.nonce,
    paymentId: r.payment_id,
    // Rows from before migration 6 carry none: they can be reconciled, never answered again (their
    // validity taken as the terms' 300 s and as much again, as reconcile judged them then).
    payloadHash: r.payload_hash ?? '',
    validUntil:
      r.valid_until === null
        ? new Date(Date.parse(iso(r.created_at)) + LEGACY_VALIDITY_MS).toISOString()
        : iso(r.valid_until),
    dataVersion: r.data_version,
    status: r.status,
    transaction: r.transaction,
    error: r.error,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

import type { PaymentLedger, PaymentRow } from '../access/payment-ledger.js';
import { NETWORKS, networkByCaip2 } from './networks.js';

/** A row is judged unsettled only this long after its payment's validity ended (a settlement sent just before may land after). */
export const SETTLE_GRACE_MS = 60 * 1000;

/** What the chain says of one EIP-3009 authorization. */
export interface AuthorizationState {
  used: boolean;
  /** The transaction that used it, when it can be found. */
  transaction: string | null;
}

/** A token transfer to the service's address, as the chain records it. */
export interface ChainTransfer {
  transaction: string;
  from: string;
  /** Atomic units. */
  value: string;
  /** The EIP-3009 authorization it carried out (`payer:nonce`, lower case), when it was one. */
  authorization: string | null;
}

/** Where payments are looked up: the token's own record of used authorizations and its transfers. */
export interface ChainReader {
  /** Whether the authorization of a ledger row was used on chain, read fresh. */
  lookup(row: PaymentRow): Promise<AuthorizationState>;
  /** The transfers of `asset` to `payTo` since a time (ms), oldest first. */
  transfersTo(asset: string, payTo: string, sinceMs: number): Promise<ChainTransfer[]>;
}

/** Whether a row's authorization is one the EVM chain reader can look up (payer:nonce). */
export function readableOnEvm(row: PaymentRow): boolean {
  const name = networkByCaip2(row.network);
  return Boolean(name && NETWORKS[name].family === 'evm' && row.nonce.includes(':'));
}

/** Whether a payment can no longer be used on chain: its validity (and the grace) has passed. */
export function expired(row: Pick<PaymentRow, 'validUntil'>, now: number): boolean {
  return now > Date.parse(row.validUntil) + SETTLE_GRACE_MS;
}

export interface Mismatches {
  /** Transfers to the service with no settled row (a payment taken and not recorded as such). */
  transfersWithoutRow: ChainTransfer[];
  /** Settled rows with no transfer on chain (an answer given for money that did not move). */
  settledWithoutTransfer: PaymentRow[];
}

/**
 * The ledger against the chain, both ways. A transfer matches a settled row by its transaction, or
 * by the authorization it carried out (a row settled from the chain without its transaction).
 * `rows` may reach further back than the transfers: only rows created since `sinceMs` are judged.
 */
export function compareLedgerWithChain(
  rows: readonly PaymentRow[],
  transfers: readonly ChainTransfer[],
  sinceMs: number,
): Mismatches {
  const settled = rows.filter((r) => r.status === 'settled');
  const byTransaction = new Map(settled.map((r) => [(r.transaction ?? '').toLowerCase(), r]));
  const byAuthorization = new Map(settled.map((r) => [r.nonce.toLowerCase(), r]));
  const matched = new Set<PaymentRow>();
  const transfersWithoutRow: ChainTransfer[] = [];
  for (const t of transfers) {
    const row =
      byTransaction.get(t.transaction.toLowerCase()) ??
      (t.authorization ? byAuthorization.get(t.authorization) : undefined);
    if (row) matched.add(row);
    else transfersWithoutRow.push(t);
  }
  const settledWithoutTransfer = settled.filter(
    (r) => !matched.has(r) && Date.parse(r.createdAt) >= sinceMs && readableOnEvm(r),
  );
  return { transfersWithoutRow, settledWithoutTransfer };
}

export interface ReconcileReport {
  settled: PaymentRow[];
  failed: PaymentRow[];
  /** Still pending: too recent to judge, or on a network this command cannot read. */
  left: { row: PaymentRow; why: string }[];
  /** What still disagrees with the chain after the fixes (null when the chain was not compared). */
  mismatches: Mismatches | null;
}

/** `ri serve` compares the ledger with the chain at start and this often. */
export const RECONCILE_EVERY_MS = 5 * 60 * 1000;

/** How far back the ledger is compared with the chain by default. */
export const RECONCILE_DAYS = 7;

/**
 * Brings the ledger in line with the chain, the record of what was paid:
 *   - every row not settled (pending, and failed: a facilitator may answer "failed" for a transfer
 *     that went through) is looked up: an authorization used on chain makes it `settled` (with its
 *     transaction when found); a pending one unused once its validity has ended can no longer be
 *     settled and is `failed`; one still valid is left for a later run;
 *   - with `payTo`, the transfers to it over the last `days` are compared with the settled rows,
 *     both ways (`mismatches`); a transfer that carried out the authorization of a row not settled
 *     proves that row paid.
 * `rows` limits the first part to those rows (the background resolver's pending ones).
 */
export async function reconcilePayments(
  ledger: PaymentLedger,
  chain: ChainReader | null,
  options: {
    now?: number;
    rows?: readonly PaymentRow[];
    /** The service's address and the tokens it is paid in: compare the transfers to it too. */
    watch?: { payTo: string; assets: readonly string[] } | null;
    days?: number;
  } = {},
): Promise<ReconcileReport> {
  const now = options.now ?? Date.now();
  const sinceMs = now - (options.days ?? RECONCILE_DAYS) * 86_400_000;
  const report: ReconcileReport = { settled: [], failed: [], left: [], mismatches: null };
  const candidates = options.rows ?? [
    ...(await ledger.listPayments({ status: 'pending' })),
    ...(await ledger.listPayments({ status: 'failed', since: new Date(sinceMs).toISOString() })),
  ];
  for (const row of candidates) {
    if (!readableOnEvm(row)) {
      report.left.push({
        row,
        why: `cannot read ${row.network} from here; check the transaction with your facilitator`,
      });
      continue;
    }
    if (!chain) {
      report.left.push({ row, why: 'X402_EVM_RPC_URL is not set' });
      continue;
    }
    const { used, transaction } = await chain.lookup(row);
    if (used) {
      const moved = await ledger.finishPayment(
        row.id,
        { status: 'settled', transaction: transaction ?? 'unknown (used on chain)' },
        row.status,
      );
      if (moved) report.settled.push(row);
    } else if (row.status === 'failed') {
      // Not used on chain: the failure stands.
    } else if (expired(row, now)) {
      const moved = await ledger.finishPayment(row.id, {
        status: 'failed',
        error: 'not used on chain before the payment expired (reconciled)',
      });
      if (moved) report.failed.push(row);
    } else {
      report.left.push({ row, why: 'still valid: it may still be settling; run again in a few minutes' });
    }
  }
  if (chain && options.watch && !options.rows)
    report.mismatches = await compareBothWays(ledger, chain, options.watch, sinceMs, report);
  return report;
}

/** A row may be written up to this long before its transfer is mined: rows are read this much further back. */
const ROW_BEFORE_TRANSFER_MS = 60 * 60 * 1000;

async function compareBothWays(
  ledger: PaymentLedger,
  chain: ChainReader,
  watch: { payTo: string; assets: readonly string[] },
  sinceMs: number,
  report: ReconcileReport,
): Promise<Mismatches> {
  const rows = (
    await ledger.listPayments({ since: new Date(sinceMs - ROW_BEFORE_TRANSFER_MS).toISOString() })
  ).filter(readableOnEvm);
  const assets = [...new Set([...watch.assets, ...rows.map((r) => r.asset)].map((a) => a.toLowerCase()))];
  const transfers: ChainTransfer[] = [];
  for (const asset of assets) transfers.push(...(await chain.transfersTo(asset, watch.payTo, sinceMs)));
  let found = compareLedgerWithChain(rows, transfers, sinceMs);
  // A transfer that carried out a row's authorization proves the row paid, whatever it says.
  const unsettled = new Map(
    rows.filter((r) => r.status !== 'settled').map((r) => [r.nonce.toLowerCase(), r]),
  );
  let fixed = false;
  for (const t of found.transfersWithoutRow) {
    const row = t.authorization ? unsettled.get(t.authorization) : undefined;
    if (!row) continue;
    if (await ledger.finishPayment(row.id, { status: 'settled', transaction: t.transaction }, row.status)) {
      if (!report.settled.includes(row)) report.settled.push(row);
      fixed = true;
    }
  }
  if (fixed) {
    const fresh = (
      await ledger.listPayments({ since: new Date(sinceMs - ROW_BEFORE_TRANSFER_MS).toISOString() })
    ).filter(readableOnEvm);
    found = compareLedgerWithChain(fresh, transfers, sinceMs);
  }
  return found;
}

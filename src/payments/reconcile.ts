import type { NewPayment, PaymentLedger, PaymentRow } from '../access/payment-ledger.js';
import { NETWORKS, networkByCaip2 } from './networks.js';
import { parseSvmNonce } from './svm-nonce.js';

/** A ledger row as a chain lookup needs it: what was recorded and when (a row just written, or read back). */
export type LedgerRef = NewPayment & Pick<PaymentRow, 'createdAt'>;

/** A row is judged unsettled only this long after its payment's validity ended (a settlement sent just before may land after). */
export const SETTLE_GRACE_MS = 60 * 1000;

/** What the chain says of one payment: an EIP-3009 authorization, or a Solana transaction. */
export interface AuthorizationState {
  used: boolean;
  /** The transaction that used it, when it can be found. */
  transaction: string | null;
  /**
   * Unused: whether the chain says it could still be used (Solana: its blockhash is still valid).
   * Absent where the clock alone says it (EVM: the authorization's validBefore).
   */
  stillUsable?: boolean;
}

/** A token transfer to the service's address, as the chain records it. */
export interface ChainTransfer {
  transaction: string;
  from: string;
  /** Atomic units. */
  value: string;
  /** The payment it carried out, as the ledger's nonce names it (EVM: `payer:nonce`, lower case), when it was one. */
  authorization: string | null;
}

/** Where payments are looked up: the chain's own record of what was used, and its transfers. */
export interface ChainReader {
  /** Whether the payment of a ledger row was used on chain, read fresh. */
  lookup(row: LedgerRef): Promise<AuthorizationState>;
  /** The transfers of `asset` to `payTo` since a time (ms), oldest first. */
  transfersTo(asset: string, payTo: string, sinceMs: number): Promise<ChainTransfer[]>;
  /** Whether it reads this network (CAIP-2); absent: every network of its family. */
  serves?(network: string): Promise<boolean>;
}

export type ChainFamily = 'evm' | 'svm';

/** The chain readers configured, by family: a row is read by its network's. */
export type ChainReaders = Partial<Record<ChainFamily, ChainReader>>;

/** The service's address and the tokens it is paid in, by family: compared with the chain's transfers to it. */
export type Watch = Partial<Record<ChainFamily, { payTo: string; assets: readonly string[] }>>;

/** The variable that gives each family's chain reader. */
export const RPC_VARIABLE: Record<ChainFamily, string> = {
  evm: 'X402_EVM_RPC_URL',
  svm: 'X402_SOLANA_RPC_URL',
};

/**
 * The family whose chain reader can look a row up: its network's, when its nonce names what that
 * reader asks by (EVM `payer:nonce`; Solana `svm:...`, which rows from before it was did not).
 */
export function readableBy(row: Pick<PaymentRow, 'network' | 'nonce'>): ChainFamily | null {
  const name = networkByCaip2(row.network);
  if (!name) return null;
  const family = NETWORKS[name].family;
  if (family === 'evm') return row.nonce.includes(':') ? 'evm' : null;
  return parseSvmNonce(row.nonce) ? 'svm' : null;
}

/** Whether a payment can no longer be used on chain: its validity (and the grace) has passed. */
export function expired(row: Pick<PaymentRow, 'validUntil'>, now: number): boolean {
  return now > Date.parse(row.validUntil) + SETTLE_GRACE_MS;
}

/**
 * Whether the chain shows a payment unused for good: unused, its validity (and the grace) passed,
 * and the chain not saying it could still land. Only then may a row be `failed`.
 */
export function unusedForGood(
  state: AuthorizationState,
  row: Pick<PaymentRow, 'validUntil'>,
  now: number,
): boolean {
  return !state.used && state.stillUsable !== true && expired(row, now);
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
 * Keys are compared in lower case: EVM's hex is caseless; two base58 ids that differ only in case
 * do not occur.
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
      (t.authorization ? byAuthorization.get(t.authorization.toLowerCase()) : undefined);
    if (row) matched.add(row);
    else transfersWithoutRow.push(t);
  }
  const settledWithoutTransfer = settled.filter(
    (r) => !matched.has(r) && Date.parse(r.createdAt) >= sinceMs && readableBy(r) !== null,
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
 *     that went through) is looked up by its network's reader: a payment used on chain makes it
 *     `settled` (with its transaction when found); a pending one the chain shows unused for good
 *     can no longer be settled and is `failed`; one still valid is left for a later run;
 *   - with `watch`, the transfers to each family's payTo over the last `days` are compared with the
 *     settled rows, both ways (`mismatches`); a transfer that carried out the payment of a row not
 *     settled proves that row paid.
 * `rows` limits the first part to those rows (the background resolver's pending ones).
 */
export async function reconcilePayments(
  ledger: PaymentLedger,
  chains: ChainReaders,
  options: {
    now?: number;
    rows?: readonly PaymentRow[];
    /** The service's addresses and the tokens it is paid in: compare the transfers to them too. */
    watch?: Watch | null;
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
    const family = readableBy(row);
    if (!family) {
      report.left.push({
        row,
        why: `cannot read ${row.network} from here; check the transaction with your facilitator`,
      });
      continue;
    }
    const chain = chains[family];
    if (!chain) {
      report.left.push({ row, why: `${RPC_VARIABLE[family]} is not set` });
      continue;
    }
    if (chain.serves && !(await chain.serves(row.network))) {
      report.left.push({ row, why: `${RPC_VARIABLE[family]} serves another network than ${row.network}` });
      continue;
    }
    const state = await chain.lookup(row);
    if (state.used) {
      const moved = await ledger.finishPayment(
        row.id,
        { status: 'settled', transaction: state.transaction ?? 'unknown (used on chain)' },
        row.status,
      );
      if (moved) report.settled.push(row);
    } else if (row.status === 'failed') {
      // Not used on chain: the failure stands.
    } else if (unusedForGood(state, row, now)) {
      const moved = await ledger.finishPayment(row.id, {
        status: 'failed',
        error: 'not used on chain before the payment expired (reconciled)',
      });
      if (moved) report.failed.push(row);
    } else {
      report.left.push({ row, why: 'still valid: it may still be settling; run again in a few minutes' });
    }
  }
  if (options.watch && !options.rows) {
    for (const family of Object.keys(options.watch) as ChainFamily[]) {
      const chain = chains[family];
      const watch = options.watch[family];
      if (!chain || !watch) continue;
      const found = await compareBothWays(ledger, chain, family, watch, sinceMs, report);
      report.mismatches = {
        transfersWithoutRow: [
          ...(report.mismatches?.transfersWithoutRow ?? []),
          ...found.transfersWithoutRow,
        ],
        settledWithoutTransfer: [
          ...(report.mismatches?.settledWithoutTransfer ?? []),
          ...found.settledWithoutTransfer,
        ],
      };
    }
  }
  return report;
}

/** A row may be written up to this long before its transfer is mined: rows are read this much further back. */
const ROW_BEFORE_TRANSFER_MS = 60 * 60 * 1000;

async function compareBothWays(
  ledger: PaymentLedger,
  chain: ChainReader,
  family: ChainFamily,
  watch: { payTo: string; assets: readonly string[] },
  sinceMs: number,
  report: ReconcileReport,
): Promise<Mismatches> {
  // The rows this reader reads: its family's, on its network.
  const readRows = async () => {
    const all = await ledger.listPayments({
      since: new Date(sinceMs - ROW_BEFORE_TRANSFER_MS).toISOString(),
    });
    const out: PaymentRow[] = [];
    for (const r of all)
      if (readableBy(r) === family && (!chain.serves || (await chain.serves(r.network)))) out.push(r);
    return out;
  };
  const rows = await readRows();
  // EVM addresses are hex (one token, however cased); Solana's are base58, where case matters.
  const same = family === 'evm' ? (a: string) => a.toLowerCase() : (a: string) => a;
  const assets = [...new Set([...watch.assets, ...rows.map((r) => r.asset)].map(same))];
  const transfers: ChainTransfer[] = [];
  for (const asset of assets) transfers.push(...(await chain.transfersTo(asset, watch.payTo, sinceMs)));
  let found = compareLedgerWithChain(rows, transfers, sinceMs);
  // A transfer that carried out a row's payment proves the row paid, whatever it says.
  const unsettled = new Map(
    rows.filter((r) => r.status !== 'settled').map((r) => [r.nonce.toLowerCase(), r]),
  );
  let fixed = false;
  for (const t of found.transfersWithoutRow) {
    const row = t.authorization ? unsettled.get(t.authorization.toLowerCase()) : undefined;
    if (!row) continue;
    if (await ledger.finishPayment(row.id, { status: 'settled', transaction: t.transaction }, row.status)) {
      if (!report.settled.includes(row)) report.settled.push(row);
      fixed = true;
    }
  }
  if (fixed) found = compareLedgerWithChain(await readRows(), transfers, sinceMs);
  return found;
}

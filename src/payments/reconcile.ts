import { createPublicClient, http, parseAbi, parseAbiItem } from 'viem';
import type { PaymentLedger, PaymentRow } from '../access/payment-ledger.js';
import { NETWORKS, networkByCaip2 } from './networks.js';

/** A row is judged unsettled only this long after its payment's validity ended (a settlement sent just before may land after). */
export const SETTLE_GRACE_MS = 60 * 1000;

/**
 * Rows written `failed` by releases that took a facilitator's silence for a refusal (a timeout, a
 * dropped connection, a 5xx): the transfer may have happened, so reconcile looks them up too.
 */
const UNKNOWN_FAILURE = /unreachable|timed? ?out|timeout|abort|ECONNRESET|socket|fetch failed|\b5\d\d\b/i;

/** Where an EIP-3009 authorization is looked up: the token's own record of used nonces. */
export interface AuthorizationReader {
  /** Whether the authorization was used on chain, and by which transaction when it can be found. */
  lookup(row: PaymentRow): Promise<{ used: boolean; transaction: string | null }>;
}

const EIP3009 = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
]);
const AUTHORIZATION_USED = parseAbiItem(
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
);

/** Reads the USDC contract over JSON-RPC (X402_EVM_RPC_URL). */
export function evmAuthorizationReader(rpcUrl: string, logBlocks = 100_000n): AuthorizationReader {
  const client = createPublicClient({ transport: http(rpcUrl) });
  return {
    async lookup(row) {
      const [payer, nonce] = row.nonce.split(':') as [`0x${string}`, `0x${string}`];
      const asset = row.asset as `0x${string}`;
      const used = await client.readContract({
        address: asset,
        abi: EIP3009,
        functionName: 'authorizationState',
        args: [payer, nonce],
      });
      if (!used) return { used: false, transaction: null };
      // Not viem's cached block number (kept for seconds): a transfer just made would be missed.
      const latest = await client.getBlockNumber({ cacheTime: 0 });
      const logs = await client.getLogs({
        address: asset,
        event: AUTHORIZATION_USED,
        args: { authorizer: payer, nonce },
        fromBlock: latest > logBlocks ? latest - logBlocks : 0n,
        toBlock: 'latest',
      });
      return { used: true, transaction: logs[0]?.transactionHash ?? null };
    },
  };
}

export interface ReconcileReport {
  settled: PaymentRow[];
  failed: PaymentRow[];
  /** Still pending: too recent to judge, or on a network this command cannot read. */
  left: { row: PaymentRow; why: string }[];
}

/**
 * Resolves ledger rows whose settlement's outcome was not known: `pending` rows (a crash between
 * settlement and the ledger write, a facilitator that did not answer) and `failed` rows whose
 * error was a timeout or a lost connection. A row whose authorization was used on chain is
 * `settled` (with its transaction when found); a pending one not used once its payment's validity
 * has ended can no longer be settled and is `failed`. `rows` limits it to those (default: all such).
 */
export async function reconcilePayments(
  ledger: PaymentLedger,
  evm: AuthorizationReader | null,
  now = Date.now(),
  rows?: readonly PaymentRow[],
): Promise<ReconcileReport> {
  const report: ReconcileReport = { settled: [], failed: [], left: [] };
  const candidates = rows ?? [
    ...(await ledger.listPayments({ status: 'pending' })),
    ...(await ledger.listPayments({ status: 'failed' })).filter((r) => UNKNOWN_FAILURE.test(r.error ?? '')),
  ];
  for (const row of candidates) {
    const name = networkByCaip2(row.network);
    if (!name || NETWORKS[name].family !== 'evm' || !row.nonce.includes(':')) {
      report.left.push({
        row,
        why: `cannot read ${row.network} from here; check the transaction with your facilitator`,
      });
      continue;
    }
    if (!evm) {
      report.left.push({ row, why: 'X402_EVM_RPC_URL is not set' });
      continue;
    }
    const { used, transaction } = await evm.lookup(row);
    if (used) {
      const moved = await ledger.finishPayment(
        row.id,
        { status: 'settled', transaction: transaction ?? 'unknown (used on chain)' },
        row.status,
      );
      if (moved) report.settled.push(row);
    } else if (row.status === 'failed') {
      // Not used on chain: the failure stands.
    } else if (now > Date.parse(row.validUntil) + SETTLE_GRACE_MS) {
      await ledger.finishPayment(row.id, { status: 'failed', error: 'not settled on chain (reconciled)' });
      report.failed.push(row);
    } else {
      report.left.push({ row, why: 'still valid: it may still be settling; run again in a few minutes' });
    }
  }
  return report;
}

import { createPublicClient, http, parseAbi, parseAbiItem } from 'viem';
import type { PaymentLedger, PaymentRow } from './ledger.js';
import { NETWORKS, networkByCaip2 } from './networks.js';

/** A pending row younger than this may still be settling (the terms allow 300 s): left alone. */
export const SETTLE_WINDOW_MS = 10 * 60 * 1000;

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
      const latest = await client.getBlockNumber();
      const logs = await client.getLogs({
        address: asset,
        event: AUTHORIZATION_USED,
        args: { authorizer: payer, nonce },
        fromBlock: latest > logBlocks ? latest - logBlocks : 0n,
        toBlock: latest,
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
 * Resolves ledger rows left `pending` by a crash between settlement and the ledger write: a
 * row whose authorization was used on chain is `settled` (with its transaction when found); one
 * not used and older than the settlement window can no longer be settled and is `failed`.
 */
export async function reconcilePayments(
  ledger: PaymentLedger,
  evm: AuthorizationReader | null,
  now = Date.now(),
): Promise<ReconcileReport> {
  const report: ReconcileReport = { settled: [], failed: [], left: [] };
  for (const row of await ledger.listPayments({ status: 'pending' })) {
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
      await ledger.finishPayment(row.id, {
        status: 'settled',
        transaction: transaction ?? 'unknown (used on chain)',
      });
      report.settled.push(row);
    } else if (now - Date.parse(row.createdAt) > SETTLE_WINDOW_MS) {
      await ledger.finishPayment(row.id, { status: 'failed', error: 'not settled on chain (reconciled)' });
      report.failed.push(row);
    } else {
      report.left.push({ row, why: 'recent: it may still be settling; run again in a few minutes' });
    }
  }
  return report;
}

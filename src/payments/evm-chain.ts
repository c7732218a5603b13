import { type AbiEvent, createPublicClient, http, type Log, parseAbi, parseAbiItem } from 'viem';
import type { ChainReader, ChainTransfer } from './reconcile.js';

const EIP3009 = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
]);
const AUTHORIZATION_USED = parseAbiItem(
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
);
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/** Blocks per eth_getLogs call: public RPC endpoints refuse wider ranges. */
const LOG_RANGE = 10_000n;

/** How far back a used authorization's transaction is searched (about 2.3 days of Base's 2 s blocks). */
const LOOKUP_BLOCKS = 100_000n;

type Hex = `0x${string}`;

/**
 * The chain as an EVM JSON-RPC endpoint (X402_EVM_RPC_URL) shows it: the USDC contract's
 * `authorizationState(payer, nonce)` (EIP-3009: true once the authorization is used, whoever sent
 * it), its `AuthorizationUsed` and `Transfer` events. Every read is fresh: never viem's cached
 * block number, which is kept for seconds and would miss a transfer just made.
 */
export function evmChainReader(rpcUrl: string): ChainReader {
  const client = createPublicClient({ transport: http(rpcUrl) });
  const latest = () => client.getBlockNumber({ cacheTime: 0 });

  /** The logs of one event over a block range, asked in ranges an RPC endpoint accepts. */
  async function logs<E extends AbiEvent>(
    address: Hex,
    event: E,
    args: Record<string, unknown>,
    from: bigint,
    to: bigint,
  ): Promise<Log<bigint, number, false, E>[]> {
    const all: Log<bigint, number, false, E>[] = [];
    for (let start = from; start <= to; start += LOG_RANGE) {
      const end = start + LOG_RANGE - 1n < to ? start + LOG_RANGE - 1n : to;
      all.push(
        ...((await client.getLogs({ address, event, args, fromBlock: start, toBlock: end } as never)) as Log<
          bigint,
          number,
          false,
          E
        >[]),
      );
    }
    return all;
  }

  /** The first block at or after a time (binary search on block timestamps). */
  async function firstBlockSince(sinceMs: number, head: bigint): Promise<bigint> {
    let lo = 0n;
    let hi = head;
    while (lo < hi) {
      const mid = (lo + hi) / 2n;
      const block = await client.getBlock({ blockNumber: mid });
      if (Number(block.timestamp) * 1000 >= sinceMs) hi = mid;
      else lo = mid + 1n;
    }
    return lo;
  }

  return {
    async lookup(row) {
      const [payer, nonce] = row.nonce.split(':') as [Hex, Hex];
      const asset = row.asset as Hex;
      const used = await client.readContract({
        address: asset,
        abi: EIP3009,
        functionName: 'authorizationState',
        args: [payer, nonce],
      });
      if (!used) return { used: false, transaction: null };
      const head = await latest();
      const found = await logs(
        asset,
        AUTHORIZATION_USED,
        { authorizer: payer, nonce },
        head > LOOKUP_BLOCKS ? head - LOOKUP_BLOCKS : 0n,
        head,
      );
      return { used: true, transaction: found[0]?.transactionHash ?? null };
    },

    async transfersTo(asset, payTo, sinceMs) {
      const head = await latest();
      const from = await firstBlockSince(sinceMs, head);
      const transfers = await logs(asset as Hex, TRANSFER, { to: payTo }, from, head);
      if (transfers.length === 0) return [];
      const payers = [...new Set(transfers.map((t) => t.args.from as Hex))];
      // The authorization each transfer carried out: in the same transaction, by the same payer.
      const used = await logs(asset as Hex, AUTHORIZATION_USED, { authorizer: payers }, from, head);
      const authorizations = new Map(
        used.map((l) => [
          `${l.transactionHash}|${(l.args.authorizer as string).toLowerCase()}`,
          `${(l.args.authorizer as string).toLowerCase()}:${(l.args.nonce as string).toLowerCase()}`,
        ]),
      );
      return transfers.map(
        (t): ChainTransfer => ({
          transaction: t.transactionHash,
          from: t.args.from as string,
          value: String(t.args.value),
          authorization:
            authorizations.get(`${t.transactionHash}|${(t.args.from as string).toLowerCase()}`) ?? null,
        }),
      );
    },
  };
}

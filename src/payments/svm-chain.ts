import {
  address,
  blockhash,
  createSolanaRpc,
  getAddressEncoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getProgramDerivedAddress,
  getTransactionDecoder,
  type Signature,
} from '@solana/kit';
import type { AuthorizationState, ChainReader, ChainTransfer, LedgerRef } from './reconcile.js';
import { parseSvmNonce, type SvmPayment, svmNonce, svmPaymentOf } from './svm-nonce.js';

const ASSOCIATED_TOKEN_PROGRAM = address('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL');

/**
 * Signatures per getSignaturesForAddress call: a first page small (a payment is looked up every
 * second while it settles, and is among the newest), then the most a node gives.
 */
const FIRST_PAGE = 100;
const PAGE = 1_000;

/** Pages read at most per search: past them the search fails rather than run on. */
const MAX_PAGES = 20;

/**
 * A payment's transaction is searched back to this long before its row was written: a payer may
 * have had it settled elsewhere first, within its blockhash's life (about 150 blocks, a minute or two).
 */
const LANDED_BEFORE_ROW_MS = 10 * 60 * 1000;

/** Transactions remembered once read (a landed transaction never changes): polls read only new ones. */
const KEPT_TRANSACTIONS = 50_000;

/** Each RPC call may take this long. */
const RPC_TIMEOUT_MS = 10_000;

/** What the service needs of one landed transaction. */
interface Landed {
  /** The payment it carries (the signer after the fee payer), if any. */
  payment: SvmPayment | null;
  /** It landed with an error: nothing in it happened, and it cannot land again. */
  failed: boolean;
  /** Token accounts whose balance it raised: by how much (atomic units), and from whose. */
  credited: Map<string, { value: bigint; mint: string; from: string }>;
}

/**
 * The chain as a Solana JSON-RPC endpoint (X402_SOLANA_RPC_URL) shows it. A payment is found by
 * the payer's signature among the recent transactions of the payer's address, since its id (the
 * fee payer's signature) is not known before it lands; it can no longer land once its blockhash
 * is no longer valid. Its network is the endpoint's genesis hash.
 */
export function svmChainReader(rpcUrl: string): ChainReader {
  const rpc = createSolanaRpc(rpcUrl);
  const send = <T>(request: { send(o: { abortSignal: AbortSignal }): Promise<T> }) =>
    request.send({ abortSignal: AbortSignal.timeout(RPC_TIMEOUT_MS) });
  const kept = new Map<string, Landed>();
  let network: Promise<string> | null = null;

  /** One landed transaction, read once. */
  async function landed(signature: Signature): Promise<Landed> {
    const known = kept.get(signature);
    if (known) return known;
    const tx = await send(
      rpc.getTransaction(signature, {
        encoding: 'base64',
        maxSupportedTransactionVersion: 0,
        commitment: 'confirmed',
      }),
    );
    // Listed but not readable (a node catching up): not judged from what is missing.
    if (!tx) throw new Error(`transaction ${signature} is listed but cannot be read yet`);
    const meta = tx.meta;
    const keys = [
      ...staticAccountsOf(tx.transaction[0]),
      ...(meta?.loadedAddresses?.writable ?? []),
      ...(meta?.loadedAddresses?.readonly ?? []),
    ];
    const before = new Map((meta?.preTokenBalances ?? []).map((b) => [b.accountIndex, b]));
    const debited = (meta?.postTokenBalances ?? []).filter(
      (b) => BigInt(b.uiTokenAmount.amount) < BigInt(before.get(b.accountIndex)?.uiTokenAmount.amount ?? 0),
    );
    const credited = new Map<string, { value: bigint; mint: string; from: string }>();
    for (const b of meta?.postTokenBalances ?? []) {
      const value =
        BigInt(b.uiTokenAmount.amount) - BigInt(before.get(b.accountIndex)?.uiTokenAmount.amount ?? 0);
      const account = keys[b.accountIndex];
      if (value > 0n && account)
        credited.set(account, {
          value,
          mint: b.mint,
          from: debited.find((d) => d.mint === b.mint)?.owner ?? '',
        });
    }
    const read: Landed = { payment: svmPaymentOf(tx.transaction[0]), failed: meta?.err != null, credited };
    if (kept.size >= KEPT_TRANSACTIONS) kept.clear();
    kept.set(signature, read);
    return read;
  }

  /** The signatures of an address's transactions, newest first, back to a time (ms). */
  async function* signaturesOf(account: string, sinceMs: number) {
    let before: Signature | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const limit = page === 0 ? FIRST_PAGE : PAGE;
      const batch = await send(
        rpc.getSignaturesForAddress(address(account), {
          limit,
          commitment: 'confirmed',
          ...(before ? { before } : {}),
        }),
      );
      for (const s of batch) {
        if (s.blockTime !== null && Number(s.blockTime) * 1000 < sinceMs) return;
        yield s;
      }
      if (batch.length < limit) return;
      before = batch[batch.length - 1]!.signature;
    }
    throw new Error(`too many transactions of ${account} to search (${MAX_PAGES} pages)`);
  }

  /** The token account of `owner` for `mint` (its associated one), under the mint's token program; null when the mint is not on this chain. */
  async function tokenAccount(mint: string, owner: string): Promise<string | null> {
    const info = await send(rpc.getAccountInfo(address(mint), { encoding: 'base64' }));
    if (!info.value) return null;
    const bytes = getAddressEncoder();
    const [ata] = await getProgramDerivedAddress({
      programAddress: ASSOCIATED_TOKEN_PROGRAM,
      seeds: [bytes.encode(address(owner)), bytes.encode(info.value.owner), bytes.encode(address(mint))],
    });
    return ata;
  }

  return {
    async serves(caip2) {
      // A CAIP-2 Solana id is the first 32 characters of the cluster's genesis hash.
      network ??= send(rpc.getGenesisHash()).then((h) => `solana:${h.slice(0, 32)}`);
      try {
        return caip2 === (await network);
      } catch (e) {
        network = null; // asked again next time
        throw e;
      }
    },

    async lookup(row: LedgerRef): Promise<AuthorizationState> {
      const p = parseSvmNonce(row.nonce);
      if (!p) throw new Error(`payment ${row.id} does not name its Solana transaction`);
      // The blockhash first: if it is no longer valid, nothing lands after this read, and the
      // search that follows sees every landing. Finalized: no fork can bring it back. (A blockhash
      // too new for the finalized bank reads not valid too: a row is judged only once its validity,
      // five minutes and more, has passed.)
      const { value: stillValid } = await send(
        rpc.isBlockhashValid(blockhash(p.blockhash), { commitment: 'finalized' }),
      );
      for await (const s of signaturesOf(p.signer, Date.parse(row.createdAt) - LANDED_BEFORE_ROW_MS)) {
        const tx = await landed(s.signature);
        if (tx.payment?.signature !== p.signature || tx.payment.signer !== p.signer) continue;
        // Landed with an error: nothing moved, and the same transaction cannot land again.
        if (tx.failed) return { used: false, transaction: null, stillUsable: false };
        return { used: true, transaction: s.signature };
      }
      return { used: false, transaction: null, stillUsable: stillValid };
    },

    async transfersTo(asset, payTo, sinceMs) {
      const account = await tokenAccount(asset, payTo);
      if (!account) return [];
      const transfers: ChainTransfer[] = [];
      for await (const s of signaturesOf(account, sinceMs)) {
        if (s.err) continue;
        const tx = await landed(s.signature);
        const credit = tx.credited.get(account);
        if (!credit || credit.mint !== asset) continue;
        transfers.push({
          transaction: s.signature,
          from: credit.from,
          value: String(credit.value),
          authorization: tx.payment ? svmNonce(tx.payment) : null,
        });
      }
      return transfers.reverse();
    },
  };
}

const base64 = getBase64Encoder();
const transactionDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();

/** The static account keys of a base64 wire transaction, in the message's order. */
function staticAccountsOf(wireBase64: string): readonly string[] {
  return messageDecoder.decode(transactionDecoder.decode(base64.encode(wireBase64)).messageBytes)
    .staticAccounts;
}

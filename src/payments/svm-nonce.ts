import {
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
} from '@solana/kit';

/**
 * What identifies a Solana payment, before and after it lands. The x402 `exact` transaction is
 * signed by the payer, then by the facilitator as its fee payer when it settles; its id on chain
 * is the fee payer's signature, unknown to the service until then. The payer's signature is known
 * from the start (ed25519 signs one message one way: it names the transaction), and the blockhash
 * bounds its life: once no longer valid, the transaction can never land.
 */
export interface SvmPayment {
  /** The first signer after the fee payer: the payer, the transfer's authority. */
  signer: string;
  /** Its signature of the transaction message, base58. */
  signature: string;
  /** The recent blockhash the message carries. */
  blockhash: string;
}

const base64 = getBase64Encoder();
const base58 = getBase58Decoder();
const transactionDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();

/** The payment a base64 wire transaction carries; null when it is not one (undecodable, or no payer's signature). */
export function svmPaymentOf(wireBase64: string): SvmPayment | null {
  try {
    const tx = transactionDecoder.decode(base64.encode(wireBase64));
    const message = messageDecoder.decode(tx.messageBytes);
    // The signatures in the message's order: the fee payer's first.
    const signer = Object.keys(tx.signatures)[1];
    const signature = signer ? tx.signatures[signer as keyof typeof tx.signatures] : null;
    if (!signer || !signature) return null;
    return { signer, signature: base58.decode(signature), blockhash: message.lifetimeToken };
  } catch {
    return null;
  }
}

const PREFIX = 'svm:';

/** The ledger's nonce of a Solana payment: everything the chain is asked by, from the signed transaction. */
export function svmNonce(p: SvmPayment): string {
  return `${PREFIX}${p.signer}:${p.signature}:${p.blockhash}`;
}

/** The payment a ledger nonce names; null for rows from before it did (a hash of the payload). */
export function parseSvmNonce(nonce: string): SvmPayment | null {
  const parts = nonce.startsWith(PREFIX) ? nonce.slice(PREFIX.length).split(':') : [];
  if (parts.length !== 3 || parts.some((p) => p === '')) return null;
  const [signer, signature, blockhash] = parts as [string, string, string];
  return { signer, signature, blockhash };
}

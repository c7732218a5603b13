/**
 * The Solana (SVM) payment path without a Solana network: verification, settlement, and the
 * chain deciding settlements the facilitator does not confirm.
 *
 * - real: the x402 client (x402Client + the official ExactSvmScheme client) signing with a generated
 *   ed25519 key; the reference x402Facilitator with the official ExactSvmScheme facilitator, running
 *   all its checks (fee payer, the payer's ed25519 signature, instruction layout, mint, recipient
 *   token account, amount) and co-signing as fee payer with a generated key on settle; the
 *   service's PaymentService, x402ResourceServer, ledger (SQLite) and nonce lock.
 * - faked: the chain. The facilitator's signer answers its RPC parts (simulate, send, confirm,
 *   blockhash, account info) from `FakeSolana`, a few token accounts of devnet USDC in memory that
 *   executes the TransferChecked of a transaction (balance, owner, mint, decimals, blockhash; every
 *   signature on send), keeping each landed transaction in its block. The client's two RPC reads
 *   (the mint's account for its decimals and token program, the latest blockhash) and the service's
 *   chain reader's (genesis hash, blockhash validity, an address's signatures, a transaction) are
 *   answered by a JSON-RPC stub on 127.0.0.1 from the same state.
 */
import { createServer, type Server } from 'node:http';
import {
  type Address,
  address,
  decompileTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getBase58Decoder,
  getBase64Decoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getProgramDerivedAddress,
  getPublicKeyFromAddress,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  partiallySignTransaction,
  verifySignature,
} from '@solana/kit';
import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { Network, PaymentPayload, PaymentRequired, SupportedResponse } from '@x402/core/types';
import type { FacilitatorAccountInfo, FacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmClientScheme } from '@x402/svm/exact/client';
import { registerExactSvmScheme } from '@x402/svm/exact/facilitator';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openStateStore } from '../../../src/access/open-state-store.js';
import type { PaymentRow } from '../../../src/access/payment-ledger.js';
import type { StateStore } from '../../../src/access/state-store.js';
import { httpFacilitator } from '../../../src/payments/facilitator.js';
import { NETWORKS } from '../../../src/payments/networks.js';
import {
  type PaidResource,
  PaymentError,
  type PaymentErrorCode,
  PaymentService,
} from '../../../src/payments/payment-service.js';
import { svmChainReader } from '../../../src/payments/svm-chain.js';
import { sampleApp } from '../../helpers/app.js';
import { riAsync } from '../../helpers/cli.js';
import { facilitatorStandIn } from '../../helpers/facilitator-stand-in.js';
import { tempDir } from '../../helpers/works.js';
import { servedSample } from '../../helpers/x402.js';

const DEVNET = NETWORKS['solana-devnet'].caip2 as Network;
const USDC_DEVNET = address('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
const TOKEN_PROGRAM = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
const ASSOCIATED_TOKEN_PROGRAM = address('ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL');
const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
const USDC_DECIMALS = 6;
const TRANSFER_CHECKED = 12;

const RESOURCE: PaidResource = {
  operation: 'getElementHistory',
  url: 'http://127.0.0.1/v1/elements/Fe/history',
  description: 'Fe history',
};

const base64 = getBase64Encoder();
const base64Decoder = getBase64Decoder();
const base58 = getBase58Decoder();
const addressBytes = getAddressEncoder();
const txDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();

interface TokenAccount {
  owner: Address;
  mint: Address;
  amount: bigint;
}

/** A token balance as a node reports it in a transaction's meta (pre/postTokenBalances). */
interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: { amount: string; decimals: number; uiAmount: number; uiAmountString: string };
}

/** A transaction that landed, as a node keeps it: its block, its accounts, its token balances. */
interface Landing {
  signature: string;
  wire: string;
  slot: number;
  blockTime: number;
  /** The message's static account keys (the addresses getSignaturesForAddress indexes it under). */
  accounts: string[];
  memo: string | null;
  /** Why it failed (a TransactionError), null when it succeeded. */
  err: unknown;
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
}

/** Devnet's genesis hash: its CAIP-2 id is `solana:` and the first 32 characters. */
const DEVNET_GENESIS_HASH = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG';

/**
 * The chain, in memory: devnet USDC (6 decimals, SPL Token program) and its token accounts at
 * their associated addresses. Executes a transaction the way the runtime would for the programs an
 * x402 payment uses (compute budget, memo, TransferChecked) and refuses any other program.
 */
class FakeSolana {
  readonly accounts = new Map<string, TokenAccount>();
  /** Issued blockhashes and their last valid block height. */
  private readonly blockhashes = new Map<string, bigint>();
  /** Landed transactions by id, oldest first. */
  private readonly landed = new Map<string, Landing>();
  private blockHeight = 1_000n;
  readonly simulated: string[] = [];

  static async ata(owner: Address, mint: Address = USDC_DEVNET): Promise<Address> {
    const [pda] = await getProgramDerivedAddress({
      programAddress: ASSOCIATED_TOKEN_PROGRAM,
      seeds: [addressBytes.encode(owner), addressBytes.encode(TOKEN_PROGRAM), addressBytes.encode(mint)],
    });
    return pda;
  }

  /** Opens the owner's USDC account (once) and adds `amount` to it. */
  async fund(owner: Address, amount: bigint): Promise<void> {
    const ata = await FakeSolana.ata(owner);
    const account = this.accounts.get(ata) ?? { owner, mint: USDC_DEVNET, amount: 0n };
    account.amount += amount;
    this.accounts.set(ata, account);
  }

  async balanceOf(owner: Address): Promise<bigint> {
    return this.accounts.get(await FakeSolana.ata(owner))?.amount ?? 0n;
  }

  latestBlockhash(): { blockhash: string; lastValidBlockHeight: bigint } {
    this.blockHeight += 1n;
    const blockhash = base58.decode(crypto.getRandomValues(new Uint8Array(32)));
    const lastValidBlockHeight = this.blockHeight + 150n;
    this.blockhashes.set(blockhash, lastValidBlockHeight);
    return { blockhash, lastValidBlockHeight };
  }

  /** Account data as getAccountInfo returns it (the mint's 82-byte layout, a token account's 165). */
  accountInfo(addr: string): FacilitatorAccountInfo | null {
    if (addr === USDC_DEVNET) {
      const mint = new Uint8Array(82); // no mint authority, supply 0, no freeze authority
      mint[44] = USDC_DECIMALS;
      mint[45] = 1; // is_initialized
      return { data: [base64Decoder.decode(mint), 'base64'], owner: TOKEN_PROGRAM, lamports: 1_461_600n };
    }
    const account = this.accounts.get(addr);
    if (!account) return null;
    const data = new Uint8Array(165);
    data.set(addressBytes.encode(account.mint), 0);
    data.set(addressBytes.encode(account.owner), 32);
    new DataView(data.buffer).setBigUint64(64, account.amount, true);
    data[108] = 1; // state: initialized
    return { data: [base64Decoder.decode(data), 'base64'], owner: TOKEN_PROGRAM, lamports: 2_039_280n };
  }

  /**
   * Runs a base64 wire transaction: the blockhash must have been issued, every signature must be
   * valid when `sigVerify`, and each TransferChecked must move tokens the source's owner signed
   * for and holds. Applies the transfers and returns the signature when `commit`.
   */
  async execute(wire: string, opts: { sigVerify: boolean; commit: boolean }): Promise<string> {
    const tx = txDecoder.decode(base64.encode(wire));
    const compiled = messageDecoder.decode(tx.messageBytes);
    const message = decompileTransactionMessage(compiled);
    if (opts.sigVerify) {
      for (const [signer, signature] of Object.entries(tx.signatures)) {
        const key = await getPublicKeyFromAddress(address(signer));
        if (!signature || !(await verifySignature(key, signature, tx.messageBytes)))
          throw new Error(`SignatureFailure: ${signer} did not sign this transaction`);
      }
    }
    const lifetime = message.lifetimeConstraint;
    if (!('blockhash' in lifetime) || !this.blockhashes.has(lifetime.blockhash))
      throw new Error('BlockhashNotFound');
    if ((this.blockhashes.get(lifetime.blockhash) ?? 0n) < this.blockHeight)
      throw new Error('BlockhashNotFound: expired');
    const signers = new Set(Object.keys(tx.signatures));
    const after = new Map([...this.accounts].map(([k, v]) => [k, { ...v }]));
    for (const ix of message.instructions) {
      if (ix.programAddress === COMPUTE_BUDGET_PROGRAM || ix.programAddress === MEMO_PROGRAM) continue;
      if (ix.programAddress !== TOKEN_PROGRAM)
        throw new Error(`program ${ix.programAddress} is not deployed on this chain`);
      const data = ix.data;
      const accounts = ix.accounts ?? [];
      if (!data || data[0] !== TRANSFER_CHECKED || data.length !== 10 || accounts.length < 4)
        throw new Error('token instruction not supported by this chain');
      const amount = new DataView(data.buffer, data.byteOffset, data.byteLength).getBigUint64(1, true);
      const [source, mint, destination, authority] = accounts.map((a) => a.address);
      if (mint !== USDC_DEVNET || data[9] !== USDC_DECIMALS) throw new Error('MintDecimalsMismatch');
      if (!signers.has(authority!)) throw new Error('MissingRequiredSignature');
      const from = after.get(source!);
      const to = after.get(destination!);
      if (!from || !to) throw new Error('AccountNotFound: token account does not exist');
      if (from.owner !== authority) throw new Error('OwnerMismatch');
      if (from.mint !== mint || to.mint !== mint) throw new Error('MintMismatch');
      if (from.amount < amount) throw new Error('Error processing Instruction 2: insufficient funds');
      from.amount -= amount;
      to.amount += amount;
    }
    if (!opts.commit) {
      this.simulated.push(wire);
      return '';
    }
    return this.land(wire, null, after);
  }

  /**
   * Lands a signed transaction that fails when it runs, as a node does with one sent past its
   * preflight: it is in a block with its error (its fee paid), and nothing else of it happens.
   */
  landFailing(wire: string, err: unknown): string {
    const lifetime = decompileTransactionMessage(
      messageDecoder.decode(txDecoder.decode(base64.encode(wire)).messageBytes),
    ).lifetimeConstraint;
    if (!('blockhash' in lifetime) || !this.blockhashValid(lifetime.blockhash))
      throw new Error('BlockhashNotFound');
    return this.land(wire, err, this.accounts);
  }

  /** Puts a transaction in a block of its own; `after`: the token accounts once it has run. */
  private land(wire: string, err: unknown, after: Map<string, TokenAccount>): string {
    const tx = txDecoder.decode(base64.encode(wire));
    const compiled = messageDecoder.decode(tx.messageBytes);
    // Its id is the fee payer's signature, present once the facilitator co-signed.
    const signature = getSignatureFromTransaction(tx);
    if (this.landed.has(signature)) throw new Error('AlreadyProcessed');
    const accounts = [...compiled.staticAccounts];
    const preTokenBalances = this.tokenBalances(accounts);
    for (const [k, v] of after) this.accounts.set(k, v);
    // The block that holds it.
    this.blockHeight += 1n;
    const memos = decompileTransactionMessage(compiled)
      .instructions.filter((ix) => ix.programAddress === MEMO_PROGRAM && ix.data)
      .map((ix) => `[${ix.data!.length}] ${new TextDecoder().decode(ix.data as Uint8Array)}`);
    this.landed.set(signature, {
      signature,
      wire,
      slot: Number(this.blockHeight),
      blockTime: Math.floor(Date.now() / 1000),
      accounts,
      memo: memos.length > 0 ? memos.join('; ') : null,
      err,
      preTokenBalances,
      postTokenBalances: this.tokenBalances(accounts),
    });
    return signature;
  }

  /** The token balances of a transaction's accounts, as its meta reports them. */
  private tokenBalances(accounts: string[]): TokenBalance[] {
    return accounts.flatMap((a, accountIndex) => {
      const t = this.accounts.get(a);
      if (!t) return [];
      const ui = Number(t.amount) / 10 ** USDC_DECIMALS;
      return [
        {
          accountIndex,
          mint: t.mint,
          owner: t.owner,
          programId: TOKEN_PROGRAM,
          uiTokenAmount: {
            amount: String(t.amount),
            decimals: USDC_DECIMALS,
            uiAmount: ui,
            uiAmountString: String(ui),
          },
        },
      ];
    });
  }

  /** The wire transaction that landed with this signature. */
  landedTransaction(signature: string): string | undefined {
    return this.landed.get(signature)?.wire;
  }

  /** The landed transaction with this id, as getTransaction reads it. */
  landing(signature: string): Landing | undefined {
    return this.landed.get(signature);
  }

  /** The transactions that load an address, newest first, as getSignaturesForAddress pages them. */
  signaturesFor(addr: string, page: { before?: string; until?: string; limit?: number }): Landing[] {
    const all = [...this.landed.values()].filter((l) => l.accounts.includes(addr)).reverse();
    const from = page.before ? all.findIndex((l) => l.signature === page.before) + 1 : 0;
    const to = page.until ? all.findIndex((l) => l.signature === page.until) : -1;
    return all.slice(from, to === -1 ? undefined : to).slice(0, page.limit ?? 1_000);
  }

  /** Whether a blockhash may still be used (isBlockhashValid): issued, and its last valid block not passed. */
  blockhashValid(blockhash: string): boolean {
    return (this.blockhashes.get(blockhash) ?? 0n) >= this.blockHeight;
  }

  /** Blocks go by (every blockhash issued so far ages by as many). */
  advance(blocks: bigint): void {
    this.blockHeight += blocks;
  }

  get height(): bigint {
    return this.blockHeight;
  }
}

/**
 * The facilitator's SVM signer with a real fee-payer key (it co-signs for real) whose RPC parts are
 * answered by the fake chain instead of a Solana node.
 */
function fakeFacilitatorSigner(feePayer: KeyPairSigner, chain: FakeSolana): FacilitatorSvmSigner {
  const onDevnet = (network: string) => {
    if (network !== DEVNET) throw new Error(`this signer has no RPC for ${network}`);
  };
  return {
    getAddresses: () => [feePayer.address],
    async signTransaction(transaction, payer, network) {
      onDevnet(network);
      if (payer !== feePayer.address) throw new Error(`no signer for fee payer ${payer}`);
      const tx = txDecoder.decode(base64.encode(transaction));
      return getBase64EncodedWireTransaction(await partiallySignTransaction([feePayer.keyPair], tx));
    },
    async simulateTransaction(transaction, network, options) {
      onDevnet(network);
      await chain.execute(transaction, { sigVerify: options?.sigVerify ?? false, commit: false });
    },
    async sendTransaction(transaction, network) {
      onDevnet(network);
      return chain.execute(transaction, { sigVerify: true, commit: true });
    },
    async confirmTransaction(signature, network) {
      onDevnet(network);
      if (!chain.landedTransaction(signature)) throw new Error(`transaction ${signature} not found`);
    },
    async getLatestBlockhash(network) {
      onDevnet(network);
      return chain.latestBlockhash();
    },
    async getAccountInfo(account, network) {
      onDevnet(network);
      return chain.accountInfo(account);
    },
  };
}

/**
 * The JSON-RPC methods the x402 SVM client and the service's chain reader (svm-chain.ts) read,
 * answered from the fake chain on 127.0.0.1 in a node's shapes (@solana/rpc-api's types).
 */
async function startRpcStub(
  chain: FakeSolana,
): Promise<{ url: string; calls: string[]; close(): Promise<void> }> {
  const calls: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      const { id, method, params } = JSON.parse(body) as { id: unknown; method: string; params: unknown[] };
      calls.push(method);
      const context = { slot: Number(chain.height) };
      const config = (params?.[1] ?? {}) as Record<string, unknown>;
      let answer: Record<string, unknown>;
      if (method === 'getGenesisHash') {
        answer = { result: DEVNET_GENESIS_HASH };
      } else if (method === 'isBlockhashValid') {
        answer = { result: { context, value: chain.blockhashValid(String(params[0])) } };
      } else if (method === 'getSignaturesForAddress') {
        const page = chain.signaturesFor(String(params[0]), config as { before?: string; limit?: number });
        answer = {
          result: page.map((l) => ({
            signature: l.signature,
            slot: l.slot,
            err: l.err,
            memo: l.memo,
            blockTime: l.blockTime,
            confirmationStatus: 'finalized',
          })),
        };
      } else if (method === 'getTransaction') {
        const l = chain.landing(String(params[0]));
        if (config.encoding !== 'base64') {
          answer = {
            error: {
              code: -32602,
              message: `this fake answers encoding base64 only, not ${config.encoding}`,
            },
          };
        } else if (l && config.maxSupportedTransactionVersion === undefined) {
          // A node refuses a version 0 transaction to a client that did not say it reads them.
          answer = {
            error: {
              code: -32015,
              message:
                'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
            },
          };
        } else {
          answer = {
            result: l && {
              slot: l.slot,
              blockTime: l.blockTime,
              version: 0,
              meta: {
                err: l.err,
                status: l.err ? { Err: l.err } : { Ok: null },
                fee: 5_000,
                preBalances: l.accounts.map(() => 1_000_000_000),
                postBalances: l.accounts.map((_, i) => (i === 0 ? 999_995_000 : 1_000_000_000)),
                innerInstructions: [],
                logMessages: [],
                preTokenBalances: l.preTokenBalances,
                postTokenBalances: l.postTokenBalances,
                rewards: [],
                loadedAddresses: { writable: [], readonly: [] },
                computeUnitsConsumed: 6_200,
              },
              transaction: [l.wire, 'base64'],
            },
          };
        }
      } else if (method === 'getLatestBlockhash') {
        const { blockhash, lastValidBlockHeight } = chain.latestBlockhash();
        answer = {
          result: { context, value: { blockhash, lastValidBlockHeight: Number(lastValidBlockHeight) } },
        };
      } else if (method === 'getAccountInfo') {
        const info = chain.accountInfo(String(params[0]));
        const value = info && {
          data: info.data,
          executable: false,
          lamports: Number(info.lamports),
          owner: info.owner,
          rentEpoch: 0,
          space: base64.encode((info.data as [string, string])[0]).length,
        };
        answer = { result: { context, value } };
      } else {
        answer = { error: { code: -32601, message: `Method not found: ${method}` } };
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ jsonrpc: '2.0', id, ...answer }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The reference facilitator as the FacilitatorClient the service takes, counting its calls. */
function asFacilitatorClient(facilitator: x402Facilitator) {
  const calls = { verify: 0, settle: 0 };
  const client: FacilitatorClient = {
    verify: (payload, requirements) => {
      calls.verify += 1;
      return facilitator.verify(payload, requirements);
    },
    settle: (payload, requirements) => {
      calls.settle += 1;
      return facilitator.settle(payload, requirements);
    },
    // x402Facilitator answers synchronously; the client interface is async.
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
  return { client, calls };
}

let chain: FakeSolana;
let rpc: Awaited<ReturnType<typeof startRpcStub>>;
let feePayer: KeyPairSigner;
let payer: KeyPairSigner;
let payTo: KeyPairSigner;
let facilitator: ReturnType<typeof asFacilitatorClient>;
let store: StateStore;
let service: PaymentService;

beforeAll(async () => {
  [feePayer, payer, payTo] = await Promise.all([
    generateKeyPairSigner(),
    generateKeyPairSigner(),
    generateKeyPairSigner(),
  ]);
  chain = new FakeSolana();
  await chain.fund(payer.address, 10_000_000n);
  await chain.fund(payTo.address, 0n);
  rpc = await startRpcStub(chain);
  const reference = new x402Facilitator();
  registerExactSvmScheme(reference, { signer: fakeFacilitatorSigner(feePayer, chain), networks: DEVNET });
  facilitator = asFacilitatorClient(reference);
  store = await openStateStore(undefined, tempDir('ri-solana-state-'));
  await store.migrate();
  service = new PaymentService({
    networks: ['solana-devnet'],
    payTo: { solana: payTo.address },
    facilitator: facilitator.client,
    ledger: store,
  });
});

afterAll(async () => {
  await service?.close();
  await store?.close();
  await rpc?.close();
});

/** A payment for these terms made by the official x402 SVM client, signing as `signer`. */
async function pay(terms: PaymentRequired, signer: KeyPairSigner = payer): Promise<PaymentPayload> {
  const client = new x402Client();
  // registerExactSvmScheme(client, { signer }) takes no RPC URL (its client would read devnet's
  // public RPC); the scheme itself takes one, here the loopback stub.
  client.register(DEVNET, new ExactSvmClientScheme(signer, { rpcUrl: rpc.url }));
  return client.createPaymentPayload(terms);
}

/** The ledger nonce of a payment, read from its transaction here: `svm:` payer, their signature, the blockhash. */
function nonceOf(payment: PaymentPayload, signer: KeyPairSigner = payer): string {
  const tx = txDecoder.decode(base64.encode((payment.payload as { transaction: string }).transaction));
  const lifetime = decompileTransactionMessage(messageDecoder.decode(tx.messageBytes)).lifetimeConstraint;
  const signature = tx.signatures[signer.address];
  if (!signature || !('blockhash' in lifetime)) throw new Error('not a payment signed by this signer');
  return `svm:${signer.address}:${base58.decode(signature)}:${lifetime.blockhash}`;
}

async function refusal(p: Promise<unknown>): Promise<{ code: PaymentErrorCode; reason: string }> {
  const e = await p.then(
    () => {
      throw new Error('expected a PaymentError, but the payment was accepted');
    },
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(PaymentError);
  const { code, reason } = e as PaymentError;
  return { code, reason };
}

/** The transaction of a payment with its TransferChecked amount rewritten (its signatures kept). */
function withTransferAmount(payment: PaymentPayload, from: bigint, to: bigint): PaymentPayload {
  const bytes = new Uint8Array(base64.encode((payment.payload as { transaction: string }).transaction));
  const pattern = new Uint8Array(10);
  pattern[0] = TRANSFER_CHECKED;
  new DataView(pattern.buffer).setBigUint64(1, from, true);
  pattern[9] = USDC_DECIMALS;
  const at = bytes.findIndex((_, i) => pattern.every((b, j) => bytes[i + j] === b));
  expect(at).toBeGreaterThan(0);
  new DataView(bytes.buffer).setBigUint64(at + 1, to, true);
  return { ...payment, payload: { transaction: base64Decoder.decode(bytes) } };
}

describe('Solana terms', () => {
  it('offers one exact USDC requirement on devnet, with the facilitator fee payer', async () => {
    const terms = await service.paymentRequired(0.05, RESOURCE);
    expect(terms.x402Version).toBe(2);
    expect(terms.resource).toMatchObject({ url: RESOURCE.url });
    expect(terms.accepts).toHaveLength(1);
    expect(terms.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
      amount: '50000',
      asset: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
      payTo: payTo.address,
      extra: { feePayer: feePayer.address },
    });
  });
});

describe('Solana payments verified by the reference facilitator (fake chain signer)', () => {
  it('a payment made by the x402 client for the terms verifies, payer = the client', async () => {
    const terms = await service.paymentRequired(0.05, RESOURCE);
    const rpcCalls = rpc.calls.length;
    const simulated = chain.simulated.length;
    const payment = await pay(terms);
    // The client read the mint (decimals, token program) and a blockhash from the loopback stub.
    expect(rpc.calls.slice(rpcCalls).sort()).toEqual(['getAccountInfo', 'getLatestBlockhash']);
    expect(payment.accepted).toEqual(terms.accepts[0]);

    const v = await service.verify(encodePaymentSignatureHeader(payment), 0.05, RESOURCE);
    expect(v.payer).toBe(payer.address);
    expect(v.network).toBe(DEVNET);
    expect(v.requirements.amount).toBe('50000');
    // The facilitator went past its static checks to the (fake) simulation of this transaction.
    expect(chain.simulated.slice(simulated)).toEqual([
      (payment.payload as { transaction: string }).transaction,
    ]);
    await service.release(v);
  });

  it('a payment made for another price is refused before the facilitator (payment_terms_mismatch)', async () => {
    const payment = await pay(await service.paymentRequired(0.01, RESOURCE));
    const before = facilitator.calls.verify;
    const r = await refusal(service.verify(payment, 0.05, RESOURCE));
    expect(r.code).toBe('payment_terms_mismatch');
    expect(facilitator.calls.verify).toBe(before);
  });

  it('a 0.01 payment relabelled as the 0.05 terms is refused by the facilitator: amount mismatch', async () => {
    const terms = await service.paymentRequired(0.05, RESOURCE);
    const payment = await pay(await service.paymentRequired(0.01, RESOURCE));
    const r = await refusal(service.verify({ ...payment, accepted: terms.accepts[0] }, 0.05, RESOURCE));
    expect(r).toEqual({ code: 'payment_invalid', reason: 'invalid_exact_svm_payload_amount_mismatch' });
  });

  it('a transaction altered after signing is refused: its signature no longer holds', async () => {
    const terms = await service.paymentRequired(0.05, RESOURCE);
    const payment = await pay(await service.paymentRequired(0.01, RESOURCE));
    // The amount raised to the price and the terms relabelled: only the signature check can tell.
    const raised = withTransferAmount({ ...payment, accepted: terms.accepts[0]! }, 10_000n, 50_000n);
    expect(await refusal(service.verify(raised, 0.05, RESOURCE))).toEqual({
      code: 'payment_invalid',
      reason: 'invalid_exact_svm_payload_signature_invalid',
    });

    // The memo altered: the message ends with the memo's data then the (empty) lookup-table list.
    const good = await pay(terms);
    const bytes = new Uint8Array(base64.encode((good.payload as { transaction: string }).transaction));
    bytes[bytes.length - 2]! ^= 0x01;
    const flipped = { ...good, payload: { transaction: base64Decoder.decode(bytes) } };
    expect(await refusal(service.verify(flipped, 0.05, RESOURCE))).toEqual({
      code: 'payment_invalid',
      reason: 'invalid_exact_svm_payload_signature_invalid',
    });

    // Not a transaction at all (the scheme logs its decoding error).
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const garbage = { ...good, payload: { transaction: 'AAAA' } };
      expect(await refusal(service.verify(garbage, 0.05, RESOURCE))).toEqual({
        code: 'payment_invalid',
        reason: 'invalid_exact_svm_payload_transaction_could_not_be_decoded',
      });
    } finally {
      quiet.mockRestore();
    }
  });

  it('a payment to another address is refused: recipient mismatch', async () => {
    const terms = await service.paymentRequired(0.05, RESOURCE);
    const thief = await generateKeyPairSigner();
    const payment = await pay({ ...terms, accepts: [{ ...terms.accepts[0]!, payTo: thief.address }] });
    const r = await refusal(service.verify({ ...payment, accepted: terms.accepts[0]! }, 0.05, RESOURCE));
    expect(r).toEqual({ code: 'payment_invalid', reason: 'invalid_exact_svm_payload_recipient_mismatch' });
  });

  it('a payer without the funds is refused by the simulation', async () => {
    const poor = await generateKeyPairSigner();
    await chain.fund(poor.address, 10_000n);
    const payment = await pay(await service.paymentRequired(0.05, RESOURCE), poor);
    const r = await refusal(service.verify(payment, 0.05, RESOURCE));
    expect(r.code).toBe('payment_invalid');
    expect(r.reason).toMatch(/insufficient funds/);
  });

  it('the same payment twice is payment_replayed until released; after release it verifies again', async () => {
    const payment = await pay(await service.paymentRequired(0.05, RESOURCE));
    const first = await service.verify(payment, 0.05, RESOURCE);
    expect((await refusal(service.verify(payment, 0.05, RESOURCE))).code).toBe('payment_replayed');
    await service.release(first);
    const again = await service.verify(payment, 0.05, RESOURCE);
    expect(again.payer).toBe(payer.address);
    expect(again.nonce).toBe(first.nonce);
    await service.release(again);
  });

  it('settles: the fee payer co-signs, the transfer lands, the ledger holds it and refuses it again', async () => {
    const payment = await pay(await service.paymentRequired(0.05, RESOURCE));
    const before = {
      payer: await chain.balanceOf(payer.address),
      payTo: await chain.balanceOf(payTo.address),
    };
    const v = await service.verify(payment, 0.05, RESOURCE);
    // The ledger knows the payment by its payer's signature and blockhash, before it lands.
    expect(v.nonce).toBe(nonceOf(payment));
    const receipt = await service.settle(v);
    expect(receipt).toMatchObject({ success: true, network: DEVNET, payer: payer.address });
    expect(await chain.balanceOf(payer.address)).toBe(before.payer - 50_000n);
    expect(await chain.balanceOf(payTo.address)).toBe(before.payTo + 50_000n);
    // The landed transaction carries both valid signatures (the fake chain checked them on send).
    const landed = txDecoder.decode(base64.encode(chain.landedTransaction(receipt.transaction)!));
    expect(Object.keys(landed.signatures).sort()).toEqual([feePayer.address, payer.address].sort());

    const [row] = await store.listPayments({ status: 'settled' });
    expect(row).toMatchObject({
      network: DEVNET,
      amount: '50000',
      asset: USDC_DEVNET,
      payer: payer.address,
      nonce: v.nonce,
      transaction: receipt.transaction,
    });
    // The same payment for the same request is a retry (the first receipt, charged once); for
    // another request, a replay.
    const again = await service.verify(payment, 0.05, RESOURCE);
    expect(await service.settle(again)).toMatchObject({ success: true, transaction: receipt.transaction });
    expect(await chain.balanceOf(payer.address)).toBe(before.payer - 50_000n);
    expect(
      (
        await refusal(
          service.verify(payment, 0.05, { ...RESOURCE, url: `${RESOURCE.url}?resolution=yearly` }),
        )
      ).code,
    ).toBe('payment_replayed');
  });
});

describe('Solana while the facilitator cannot be reached', () => {
  /** The reference facilitator behind a switch: getSupported throws while it is down. */
  function flakyFacilitator() {
    const state = { up: false };
    const reference = new x402Facilitator();
    registerExactSvmScheme(reference, { signer: fakeFacilitatorSigner(feePayer, chain), networks: DEVNET });
    const client: FacilitatorClient = {
      ...asFacilitatorClient(reference).client,
      getSupported: async () => {
        if (!state.up) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
        return reference.getSupported() as SupportedResponse;
      },
    };
    return { client, state };
  }

  /** Terms asked after the service's retry interval (30 s) has passed. */
  async function afterRetryInterval<T>(f: () => Promise<T>): Promise<T> {
    const clock = vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 31_000);
    try {
      return await f();
    } finally {
      clock.mockRestore();
    }
  }

  it('with Base too: only Base is offered, a Solana payment is refused, Solana is back once it answers', async () => {
    const flaky = flakyFacilitator();
    const s = new PaymentService({
      networks: ['base-sepolia', 'solana-devnet'],
      payTo: { evm: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', solana: payTo.address },
      facilitator: flaky.client,
      ledger: store,
    });
    try {
      const down = await s.paymentRequired(0.05, RESOURCE);
      expect(down.accepts.map((a) => a.network)).toEqual(['eip155:84532']);
      // What discovery states is what the 402 offers, and the start line says what Solana waits for.
      expect(s.offeredNow).toEqual(['base-sepolia']);
      expect(s.waiting).toEqual([{ network: 'solana-devnet', why: expect.stringMatching(/fee payer/) }]);
      const payment = await pay(await service.paymentRequired(0.05, RESOURCE));
      expect((await refusal(s.verify(payment, 0.05, RESOURCE))).code).toBe('payment_terms_mismatch');

      flaky.state.up = true;
      const back = await afterRetryInterval(() => s.paymentRequired(0.05, RESOURCE));
      expect(back.accepts.find((a) => a.network === DEVNET)?.extra).toMatchObject({
        feePayer: feePayer.address,
      });
      // This facilitator settles Solana only: once it has said so, Base is not offered either.
      expect(s.offeredNow).toEqual(['solana-devnet']);
      expect(s.waiting).toEqual([{ network: 'base-sepolia', why: 'the facilitator does not support it' }]);
      const v = await s.verify(payment, 0.05, RESOURCE);
      expect(v.payer).toBe(payer.address);
      await s.release(v);
    } finally {
      await s.close();
    }
  });

  it('over HTTP: /.well-known/x402, x-payment-info and /pricing state only what a 402 offers now', async () => {
    const flaky = flakyFacilitator();
    const app = await sampleApp(
      {
        X402_NETWORKS: ['base-sepolia', 'solana-devnet'],
        X402_PAY_TO_EVM: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        X402_PAY_TO_SOLANA: payTo.address,
      },
      { facilitator: flaky.client },
    );
    const stated = async () => {
      const known = (await (await app.app.request('/.well-known/x402')).json()) as {
        networks: { name: string }[];
      };
      const doc = (await (await app.app.request('/v1/openapi.json')).json()) as {
        paths: Record<string, Record<string, { 'x-payment-info'?: { networks: string[] } }>>;
      };
      const pricing = await (await app.app.request('/pricing')).text();
      const terms = await app.app.request('/v1/elements/Fe/history');
      const offered = JSON.parse(
        Buffer.from(terms.headers.get('payment-required')!, 'base64').toString('utf8'),
      ) as PaymentRequired;
      return {
        discovery: known.networks.map((n) => n.name),
        openapi: doc.paths['/elements/{symbol}/history']!.get!['x-payment-info']!.networks,
        pricing: /USDC on Solana/.test(pricing) || /or Solana/.test(pricing),
        terms: offered.accepts.map((a) => a.network),
      };
    };
    try {
      expect(await stated()).toEqual({
        discovery: ['base-sepolia'],
        openapi: ['eip155:84532'],
        pricing: false,
        terms: ['eip155:84532'],
      });
      // Up, it says it settles Solana (only): that is what every place states from then on.
      flaky.state.up = true;
      expect(await afterRetryInterval(stated)).toEqual({
        discovery: ['solana-devnet'],
        openapi: [DEVNET],
        pricing: true,
        terms: [DEVNET],
      });
    } finally {
      await app.close();
    }
  });

  // With Solana the only network and the facilitator away, initialize() finds no kind at all: the
  // service must still answer (nothing offered) and ask the facilitator again later.
  it('Solana only: nothing is offered, no exception escapes, and it is offered once it answers', async () => {
    const flaky = flakyFacilitator();
    const s = new PaymentService({
      networks: ['solana-devnet'],
      payTo: { solana: payTo.address },
      facilitator: flaky.client,
      ledger: store,
    });
    try {
      expect(s.enabled).toBe(true);
      const down = await s.paymentRequired(0.05, RESOURCE);
      expect(down.accepts).toEqual([]);
      // A payment made while it was up matches no terms now.
      const payment = await pay(await service.paymentRequired(0.05, RESOURCE));
      expect((await refusal(s.verify(payment, 0.05, RESOURCE))).code).toBe('payment_terms_mismatch');

      flaky.state.up = true;
      const back = await afterRetryInterval(() => s.paymentRequired(0.05, RESOURCE));
      expect(back.accepts).toHaveLength(1);
      expect(back.accepts[0]!.extra).toMatchObject({ feePayer: feePayer.address });
      const v = await s.verify(payment, 0.05, RESOURCE);
      expect(v.payer).toBe(payer.address);
      await s.release(v);
    } finally {
      await s.close();
    }
  });
});

/**
 * The chain decides what was paid on Solana too, over real HTTP: the service in front of a
 * facilitator stand-in (the reference SVM facilitator settling on the fake chain) that misbehaves,
 * the chain read over X402_SOLANA_RPC_URL (the fake's JSON-RPC). A payment is found by its payer's
 * signature among the payer's transactions; it can no longer land once its blockhash has expired.
 */
describe('the chain decides Solana settlements (over HTTP)', () => {
  let standIn: Awaited<ReturnType<typeof facilitatorStandIn>>;
  let reference: FacilitatorClient;
  /** Reads the chain; its clock runs `ahead` (past a payment's validity, without waiting). */
  let reading: Awaited<ReturnType<typeof servedSample>>;
  /** Has no X402_SOLANA_RPC_URL. */
  let blind: Awaited<ReturnType<typeof servedSample>>;
  let shop: KeyPairSigner;
  let blindShop: KeyPairSigner;
  let ahead = 0;

  beforeAll(async () => {
    // A payTo each, so each ledger is compared with transfers to its own address only.
    [shop, blindShop] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    await chain.fund(shop.address, 0n);
    await chain.fund(blindShop.address, 0n);
    const facilitator = new x402Facilitator();
    registerExactSvmScheme(facilitator, { signer: fakeFacilitatorSigner(feePayer, chain), networks: DEVNET });
    reference = asFacilitatorClient(facilitator).client;
    standIn = await facilitatorStandIn(reference);
    reading = await servedSample(
      { X402_NETWORKS: ['solana-devnet'], X402_PAY_TO_SOLANA: shop.address, X402_SOLANA_RPC_URL: rpc.url },
      { facilitator: httpFacilitator(standIn.url), paymentsNow: () => Date.now() + ahead },
    );
    blind = await servedSample(
      { X402_NETWORKS: ['solana-devnet'], X402_PAY_TO_SOLANA: blindShop.address },
      { facilitator: httpFacilitator(standIn.url) },
    );
  });

  afterAll(async () => {
    await reading?.close();
    await blind?.close();
    await standIn?.close();
  });

  type App = typeof reading;
  const path = (symbol: string) => `/v1/elements/${symbol}/history`;

  async function termsOf(app: App, symbol: string): Promise<PaymentRequired> {
    const unpaid = await fetch(`${app.server.base}${path(symbol)}`);
    expect(unpaid.status).toBe(402);
    return decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
  }

  const send = (app: App, symbol: string, payment: PaymentPayload) =>
    fetch(`${app.server.base}${path(symbol)}`, {
      headers: { 'payment-signature': encodePaymentSignatureHeader(payment) },
    });

  const rowsOf = async (app: App, payment: PaymentPayload) =>
    (await app.ctx.state.listPayments()).filter((r) => r.nonce === nonceOf(payment));

  /** Pays `symbol`'s history with the facilitator stand-in in `mode`; the answer's status, body and receipt. */
  async function paid(app: App, symbol: string, mode: Parameters<typeof setMode>[0]) {
    const payment = await pay(await termsOf(app, symbol));
    setMode(mode);
    try {
      const res = await send(app, symbol, payment);
      const body = (await res.json()) as Record<string, unknown>;
      const header = res.headers.get('payment-response');
      return {
        payment,
        status: res.status,
        body,
        receipt: header ? decodePaymentResponseHeader(header) : null,
      };
    } finally {
      setMode({ kind: 'ok' });
    }
  }

  function setMode(mode: typeof standIn.state.mode) {
    standIn.state.mode = mode;
  }

  it('(a) settles, then answers "failed": the answer, the row settled with the transaction the chain shows', async () => {
    const before = await chain.balanceOf(payer.address);
    const settles = standIn.state.settles;
    const { payment, status, body, receipt } = await paid(reading, 'Fe', { kind: 'fail-after' });
    expect(status).toBe(200);
    expect(body).toHaveProperty('series');
    expect(standIn.state.settles).toBe(settles + 1);
    // The transaction's id is the fee payer's signature: the service learnt it from the chain.
    const landed = txDecoder.decode(base64.encode(chain.landedTransaction(receipt!.transaction)!));
    expect(base58.decode(landed.signatures[feePayer.address]!)).toBe(receipt!.transaction);
    expect(before - (await chain.balanceOf(payer.address))).toBe(50_000n);
    expect(await rowsOf(reading, payment)).toMatchObject([
      { status: 'settled', transaction: receipt!.transaction, payer: payer.address },
    ]);
    // The same payment again: the same receipt, nothing moves, no second settlement.
    const again = await send(reading, 'Fe', payment);
    expect(again.status).toBe(200);
    expect(decodePaymentResponseHeader(again.headers.get('payment-response')!).transaction).toBe(
      receipt!.transaction,
    );
    expect(standIn.state.settles).toBe(settles + 1);
    expect(before - (await chain.balanceOf(payer.address))).toBe(50_000n);
  });

  it('(c) settles and never answers: the answer as soon as the chain shows it, long before the deadline', async () => {
    const started = Date.now();
    const { payment, status, receipt } = await paid(reading, 'Ti', { kind: 'hang' });
    expect(status).toBe(200);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(await rowsOf(reading, payment)).toMatchObject([
      { status: 'settled', transaction: receipt!.transaction },
    ]);
  });

  it('(d) refuses without sending: 402 while the blockhash is valid, the row pending; failed once it has expired', async () => {
    const before = await chain.balanceOf(payer.address);
    const { payment, status, body } = await paid(reading, 'Ni', { kind: 'refuse' });
    expect(status).toBe(402);
    expect(body).toMatchObject({ code: 'settlement_failed' });
    expect(body).not.toHaveProperty('series');
    expect(String(body.detail)).toMatch(/the chain shows no transfer/);
    expect(await chain.balanceOf(payer.address)).toBe(before);
    expect(await rowsOf(reading, payment)).toMatchObject([{ status: 'pending', transaction: null }]);

    // The payment's validity (300 s and the minute's grace) is over, but its blockhash is still
    // valid (a cluster that has stalled): it could still land, so the row stays pending.
    ahead = 400_000;
    try {
      await reading.ctx.payments.resolvePending();
      expect(await rowsOf(reading, payment)).toMatchObject([{ status: 'pending' }]);
      // 150 blocks and more go by: the blockhash has expired, the transaction can never land.
      chain.advance(200n);
      await reading.ctx.payments.resolvePending();
      expect(await rowsOf(reading, payment)).toMatchObject([
        { status: 'failed', error: expect.stringMatching(/not used on chain/) },
      ]);
    } finally {
      ahead = 0;
    }
    expect(await chain.balanceOf(payer.address)).toBe(before);
  });

  it('with no Solana RPC: a refusal is 503 settlement_pending, the row pending, never failed', async () => {
    const before = await chain.balanceOf(payer.address);
    const { payment, status, body } = await paid(blind, 'Co', { kind: 'refuse' });
    expect(status).toBe(503);
    expect(body).toMatchObject({ code: 'settlement_pending' });
    expect(String(body.detail)).toMatch(/this server cannot read the chain/);
    expect(body).not.toHaveProperty('series');
    expect(await chain.balanceOf(payer.address)).toBe(before);
    await blind.ctx.payments.resolvePending();
    expect(await rowsOf(blind, payment)).toMatchObject([{ status: 'pending', transaction: null }]);
  });

  it('ri payments reconcile settles from the chain a Solana row the server could not read', async () => {
    // Settled, then "failed": the server without a reader cannot tell, and holds the answer.
    const { payment, status } = await paid(blind, 'Cu', { kind: 'fail-after' });
    expect(status).toBe(503);
    const rows = await rowsOf(blind, payment);
    expect(rows).toMatchObject([{ status: 'pending' }]);
    const env = {
      STATE_URL: `sqlite:${blind.ctx.statePath}`,
      X402_NETWORKS: 'solana-devnet',
      X402_PAY_TO_SOLANA: blindShop.address,
    };
    // riAsync: the fake chain answers from this process, whose event loop must keep running.
    const without = await riAsync(['payments', 'reconcile'], env);
    expect(without.status).toBe(0);
    expect(without.stdout).toContain(`pending\t${rows[0]!.id}\tX402_SOLANA_RPC_URL is not set`);
    const rec = await riAsync(['payments', 'reconcile'], { ...env, X402_SOLANA_RPC_URL: rpc.url });
    expect(rec.stderr).toMatch(/1 settled, 0 failed, 1 left pending/); // the refused one of the test before is still valid
    expect(rec.stderr).toMatch(
      /0 transfer\(s\) without a settled row, 0 settled row\(s\) without a transfer/,
    );
    expect(rec.status).toBe(0);
    const [row] = await rowsOf(blind, payment);
    expect(chain.landedTransaction(row!.transaction!)).toBeDefined();
    // The payer's retry now gets the answer, with the transaction found on chain.
    const again = await send(blind, 'Cu', payment);
    expect(again.status).toBe(200);
    expect(decodePaymentResponseHeader(again.headers.get('payment-response')!).transaction).toBe(
      row!.transaction,
    );
  });

  it('reconcile compares the transfers to the Solana payTo with the ledger, both ways', async () => {
    expect(await reading.ctx.payments.reconcile()).toEqual({
      transfersWithoutRow: [],
      settledWithoutTransfer: [],
    });
    // A payment carried out on chain that never reached the service's ledger.
    const terms = await termsOf(reading, 'Mo');
    const stray = await pay(terms);
    const settled = await reference.settle(stray, terms.accepts[0]!);
    expect(settled.success).toBe(true);
    // A row that says settled for money that never moved.
    const ghost = {
      id: 'ghost-row',
      operation: 'getElementHistory',
      resource: `${reading.server.base}${path('W')}`,
      amount: '50000',
      network: DEVNET,
      asset: USDC_DEVNET,
      payer: payer.address,
      nonce: `svm:${payer.address}:${'2'.repeat(88)}:${'3'.repeat(44)}`,
      payloadHash: 'f'.repeat(64),
      validUntil: new Date(Date.now() + 60_000).toISOString(),
      dataVersion: null,
    };
    expect(await reading.ctx.state.recordPayment(ghost)).toBe(true);
    await reading.ctx.state.finishPayment(ghost.id, { status: 'settled', transaction: '4'.repeat(88) });

    const rec = await riAsync(['payments', 'reconcile', '--days', '1'], {
      STATE_URL: `sqlite:${reading.ctx.statePath}`,
      X402_NETWORKS: 'solana-devnet',
      X402_PAY_TO_SOLANA: shop.address,
      X402_SOLANA_RPC_URL: rpc.url,
    });
    expect(rec.stderr).toMatch(
      /1 transfer\(s\) without a settled row, 1 settled row\(s\) without a transfer/,
    );
    expect(rec.stdout).toContain(
      `transfer-without-settled-row\t${settled.transaction}\t${payer.address}\t50000\t${nonceOf(stray)}`,
    );
    expect(rec.stdout).toContain('settled-row-without-transfer\tghost-row');
    expect(rec.status).toBe(3);
  });
});

describe('the Solana chain reader (X402_SOLANA_RPC_URL)', () => {
  /** The ledger row the service writes for a payment, pending. */
  function rowFor(payment: PaymentPayload): PaymentRow {
    const now = new Date().toISOString();
    return {
      id: 'row',
      operation: RESOURCE.operation,
      resource: RESOURCE.url,
      amount: '50000',
      network: DEVNET,
      asset: USDC_DEVNET,
      payer: payer.address,
      nonce: nonceOf(payment),
      paymentId: null,
      payloadHash: 'f'.repeat(64),
      validUntil: new Date(Date.now() + 300_000).toISOString(),
      dataVersion: null,
      status: 'pending',
      transaction: null,
      error: null,
      createdAt: now,
      updatedAt: now,
    };
  }

  it('reads the cluster its genesis hash names, and no other', async () => {
    const reader = svmChainReader(rpc.url);
    expect(await reader.serves!(DEVNET)).toBe(true);
    expect(await reader.serves!(NETWORKS.solana.caip2)).toBe(false);
  });

  it('a payment not landed is unused, and may still land while its blockhash is valid', async () => {
    const payment = await pay(await service.paymentRequired(0.05, RESOURCE));
    expect(await svmChainReader(rpc.url).lookup(rowFor(payment))).toEqual({
      used: false,
      transaction: null,
      stillUsable: true,
    });
  });

  it('a transaction that landed with an error is unused, and can never land again', async () => {
    const payment = await pay(await service.paymentRequired(0.05, RESOURCE));
    const signed = await fakeFacilitatorSigner(feePayer, chain).signTransaction(
      (payment.payload as { transaction: string }).transaction,
      feePayer.address,
      DEVNET,
    );
    const before = await chain.balanceOf(payer.address);
    chain.landFailing(signed, { InstructionError: [2, { Custom: 1 }] });
    expect(await svmChainReader(rpc.url).lookup(rowFor(payment))).toEqual({
      used: false,
      transaction: null,
      stillUsable: false,
    });
    expect(await chain.balanceOf(payer.address)).toBe(before);
  });
});

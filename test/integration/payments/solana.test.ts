/**
 * The Solana (SVM) payment path, checked at the verification level without a Solana network:
 *
 * - real: the x402 client (x402Client + the official ExactSvmScheme client) signing with a generated
 *   ed25519 key; the reference x402Facilitator with the official ExactSvmScheme facilitator, running
 *   all its checks (fee payer, the payer's ed25519 signature, instruction layout, mint, recipient
 *   token account, amount) and co-signing as fee payer with a generated key on settle; the
 *   service's PaymentService, x402ResourceServer, ledger (SQLite) and nonce lock.
 * - faked: the chain. The facilitator's signer answers its RPC parts (simulate, send, confirm,
 *   blockhash, account info) from `FakeSolana`, a few token accounts of devnet USDC in memory that
 *   executes the TransferChecked of a transaction (balance, owner, mint, decimals, blockhash; every
 *   signature on send). The client's two RPC reads (the mint's account for its decimals and token
 *   program, the latest blockhash) are answered by a JSON-RPC stub on 127.0.0.1 from the same state.
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
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { FacilitatorClient } from '@x402/core/server';
import type { Network, PaymentPayload, PaymentRequired, SupportedResponse } from '@x402/core/types';
import type { FacilitatorAccountInfo, FacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmClientScheme } from '@x402/svm/exact/client';
import { registerExactSvmScheme } from '@x402/svm/exact/facilitator';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openStateStore } from '../../../src/access/open-state-store.js';
import type { StateStore } from '../../../src/access/state-store.js';
import { NETWORKS } from '../../../src/payments/networks.js';
import {
  type PaidResource,
  PaymentError,
  type PaymentErrorCode,
  PaymentService,
} from '../../../src/payments/payment-service.js';
import { sampleApp } from '../../helpers/app.js';
import { tempDir } from '../../helpers/works.js';

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

/**
 * The chain, in memory: devnet USDC (6 decimals, SPL Token program) and its token accounts at
 * their associated addresses. Executes a transaction the way the runtime would for the programs an
 * x402 payment uses (compute budget, memo, TransferChecked) and refuses any other program.
 */
class FakeSolana {
  readonly accounts = new Map<string, TokenAccount>();
  /** Issued blockhashes and their last valid block height. */
  private readonly blockhashes = new Map<string, bigint>();
  private readonly landed = new Map<string, string>();
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
    const message = decompileTransactionMessage(messageDecoder.decode(tx.messageBytes));
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
    // Its id is the fee payer's signature, present once the facilitator co-signed.
    const signature = getSignatureFromTransaction(tx);
    if (this.landed.has(signature)) throw new Error('AlreadyProcessed');
    for (const [k, v] of after) this.accounts.set(k, v);
    this.landed.set(signature, wire);
    return signature;
  }

  /** The wire transaction that landed with this signature. */
  landedTransaction(signature: string): string | undefined {
    return this.landed.get(signature);
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

/** The JSON-RPC methods the x402 SVM client reads, answered from the fake chain on 127.0.0.1. */
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
      const context = { slot: 1 };
      let answer: Record<string, unknown>;
      if (method === 'getLatestBlockhash') {
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

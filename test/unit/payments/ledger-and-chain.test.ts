import { describe, expect, it } from 'vitest';
import type { PaymentRow } from '../../../src/access/payment-ledger.js';
import { REDEEM_MS, redeemUntil } from '../../../src/payments/payment-service.js';
import {
  compareLedgerWithChain,
  expired,
  readableBy,
  SETTLE_GRACE_MS,
  unusedForGood,
} from '../../../src/payments/reconcile.js';
import { parseSvmNonce, svmNonce } from '../../../src/payments/svm-nonce.js';

const SINCE = Date.parse('2026-12-01T00:00:00Z');
const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const SVM = {
  signer: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
  signature: '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW',
  blockhash: 'EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N',
};

function row(over: Partial<PaymentRow>): PaymentRow {
  return {
    id: 'r',
    operation: 'getElementHistory',
    resource: 'https://ri.example.org/v1/elements/Fe/history',
    amount: '50000',
    network: 'eip155:84532',
    asset: '0xusdc',
    payer: '0xpayer',
    nonce: '0xpayer:0x01',
    paymentId: null,
    payloadHash: 'f'.repeat(64),
    validUntil: '2026-12-01T12:05:00.000Z',
    dataVersion: null,
    status: 'settled',
    transaction: '0xt1',
    error: null,
    createdAt: '2026-12-01T12:00:00.000Z',
    updatedAt: '2026-12-01T12:00:01.000Z',
    ...over,
  };
}

describe('compareLedgerWithChain', () => {
  it('matches transfers to settled rows by transaction, or by the authorization when the row has no transaction', () => {
    const rows = [
      row({ id: 'a', transaction: '0xT1' }),
      row({ id: 'b', nonce: '0xpayer:0x02', transaction: 'unknown (used on chain)' }),
    ];
    const transfers = [
      { transaction: '0xt1', from: '0xpayer', value: '50000', authorization: '0xpayer:0x01' },
      { transaction: '0xt2', from: '0xpayer', value: '50000', authorization: '0xpayer:0x02' },
    ];
    expect(compareLedgerWithChain(rows, transfers, SINCE)).toEqual({
      transfersWithoutRow: [],
      settledWithoutTransfer: [],
    });
  });

  it('finds both kinds of mismatch; a pending row explains no transfer, and an old row is not judged', () => {
    const rows = [
      row({ id: 'ghost', transaction: '0xt9' }),
      row({ id: 'old', transaction: '0xt8', createdAt: '2026-11-30T23:00:00.000Z' }),
      row({ id: 'pending', nonce: '0xpayer:0x03', status: 'pending', transaction: null }),
    ];
    const stray = { transaction: '0xt3', from: '0xpayer', value: '50000', authorization: '0xpayer:0x03' };
    const found = compareLedgerWithChain(rows, [stray], SINCE);
    expect(found.transfersWithoutRow).toEqual([stray]);
    expect(found.settledWithoutTransfer.map((r) => r.id)).toEqual(['ghost']);
  });

  it('leaves rows of networks it cannot read (Solana) out of the settled-without-transfer count', () => {
    const solana = row({ network: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', nonce: 'abc123' });
    expect(compareLedgerWithChain([solana], [], SINCE).settledWithoutTransfer).toEqual([]);
  });
});

describe('which chain reader reads a row', () => {
  it('EVM rows by their payer:nonce; Solana rows by the transaction their nonce names, not by a legacy hash', () => {
    expect(readableBy(row({}))).toBe('evm');
    expect(readableBy(row({ nonce: 'f'.repeat(64) }))).toBeNull();
    expect(readableBy(row({ network: DEVNET, nonce: svmNonce(SVM) }))).toBe('svm');
    expect(readableBy(row({ network: DEVNET, nonce: 'a'.repeat(64) }))).toBeNull();
    expect(readableBy(row({ network: 'eip155:1', nonce: '0xpayer:0x01' }))).toBeNull();
  });

  it("a Solana nonce carries the payer, the payer's signature and the blockhash, and gives them back", () => {
    expect(svmNonce(SVM)).toBe(`svm:${SVM.signer}:${SVM.signature}:${SVM.blockhash}`);
    expect(parseSvmNonce(svmNonce(SVM))).toEqual(SVM);
    expect(parseSvmNonce(`svm:${SVM.signer}:${SVM.signature}`)).toBeNull();
    expect(parseSvmNonce(`svm:${SVM.signer}::${SVM.blockhash}`)).toBeNull();
  });

  it('matches a Solana transfer to its settled row by the payment it carried out, case and all', () => {
    const solana = row({ network: DEVNET, nonce: svmNonce(SVM), transaction: 'unknown (used on chain)' });
    const transfer = { transaction: 'txid', from: SVM.signer, value: '50000', authorization: svmNonce(SVM) };
    expect(compareLedgerWithChain([solana], [transfer], SINCE)).toEqual({
      transfersWithoutRow: [],
      settledWithoutTransfer: [],
    });
    expect(compareLedgerWithChain([solana], [], SINCE).settledWithoutTransfer).toEqual([solana]);
  });
});

describe('the times a payment is judged by', () => {
  it('is expired only a grace after its validity', () => {
    const r = row({});
    expect(expired(r, Date.parse(r.validUntil) + SETTLE_GRACE_MS)).toBe(false);
    expect(expired(r, Date.parse(r.validUntil) + SETTLE_GRACE_MS + 1)).toBe(true);
  });

  it('is unused for good only once expired, and only if the chain does not say it could still land', () => {
    const r = row({});
    const after = Date.parse(r.validUntil) + SETTLE_GRACE_MS + 1;
    const unused = { used: false, transaction: null };
    // EVM: the clock alone.
    expect(unusedForGood(unused, r, after - 1)).toBe(false);
    expect(unusedForGood(unused, r, after)).toBe(true);
    // Solana: its blockhash too (a stalled cluster keeps it valid past any clock).
    expect(unusedForGood({ ...unused, stillUsable: true }, r, after)).toBe(false);
    expect(unusedForGood({ ...unused, stillUsable: false }, r, after)).toBe(true);
    expect(unusedForGood({ ...unused, stillUsable: false }, r, after - 1)).toBe(false);
    expect(unusedForGood({ used: true, transaction: 'tx' }, r, after)).toBe(false);
  });

  it('is redeemable a day after its settlement or its validity, whichever is later', () => {
    expect(redeemUntil(row({}))).toBe('2026-12-02T12:05:00.000Z');
    expect(redeemUntil(row({ updatedAt: '2026-12-01T13:00:00.000Z' }))).toBe('2026-12-02T13:00:00.000Z');
    expect(Date.parse(redeemUntil(row({}))) - Date.parse(row({}).validUntil)).toBe(REDEEM_MS);
  });
});

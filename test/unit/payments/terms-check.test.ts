import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { describe, expect, it } from 'vitest';
import {
  acceptedMismatch,
  authorizationMismatch,
  CLOCK_SKEW_SECONDS,
  resourceMismatch,
} from '../../../src/payments/terms-check.js';

const OFFER: PaymentRequirements = {
  scheme: 'exact',
  network: 'eip155:84532',
  amount: '50000',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  maxTimeoutSeconds: 300,
  extra: { name: 'USDC', version: '2' },
};
const NOW = 1_800_000_000;

function payment(auth: Record<string, string>, resource?: string): PaymentPayload {
  return {
    x402Version: 2,
    accepted: OFFER,
    ...(resource ? { resource: { url: resource, description: '', mimeType: 'application/json' } } : {}),
    payload: {
      signature: '0x',
      authorization: {
        from: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
        to: OFFER.payTo.toLowerCase(),
        value: '50000',
        validAfter: '0',
        validBefore: String(NOW + 300),
        nonce: `0x${'00'.repeat(32)}`,
        ...auth,
      },
    },
  };
}

describe('authorizationMismatch', () => {
  it('takes the offer as signed by the reference client (payTo in any case)', () => {
    expect(authorizationMismatch(payment({}), OFFER, NOW)).toEqual([]);
  });

  it('allows a payer clock up to CLOCK_SKEW_SECONDS ahead, not one second more', () => {
    const edge = String(NOW + 300 + CLOCK_SKEW_SECONDS);
    expect(authorizationMismatch(payment({ validBefore: edge }), OFFER, NOW)).toEqual([]);
    const past = String(NOW + 300 + CLOCK_SKEW_SECONDS + 1);
    expect(authorizationMismatch(payment({ validBefore: past }), OFFER, NOW).map((m) => m.field)).toEqual([
      'authorization.validBefore',
    ]);
  });

  it('names each field that is not the offer: ten years, another address, another amount, a start in the future', () => {
    const edited = payment({
      validBefore: String(NOW + 315_360_000),
      to: '0x0000000000000000000000000000000000000001',
      value: '1',
      validAfter: String(NOW + 3600),
    });
    expect(authorizationMismatch(edited, OFFER, NOW).map((m) => m.field)).toEqual([
      'authorization.to',
      'authorization.value',
      'authorization.validBefore',
      'authorization.validAfter',
    ]);
  });

  it('refuses values that are not integers rather than throwing', () => {
    expect(authorizationMismatch(payment({ value: '5e4' }), OFFER, NOW).map((m) => m.field)).toEqual([
      'authorization.value',
    ]);
  });

  it('leaves payloads without an EIP-3009 authorization (Solana) to the facilitator', () => {
    expect(authorizationMismatch({ ...payment({}), payload: { transaction: 'AQID' } }, OFFER, NOW)).toEqual(
      [],
    );
  });
});

describe('acceptedMismatch', () => {
  it('names the fields of the offer on the same network that differ', () => {
    expect(acceptedMismatch({ ...OFFER, amount: '1', maxTimeoutSeconds: 9 }, [OFFER])).toEqual([
      { field: 'amount', sent: '1', expected: '50000' },
      { field: 'maxTimeoutSeconds', sent: '9', expected: '300' },
    ]);
  });

  it('names the network when no offer is on it', () => {
    expect(acceptedMismatch({ ...OFFER, network: 'eip155:8453' }, [OFFER])).toEqual([
      { field: 'network', sent: 'eip155:8453', expected: 'eip155:84532' },
    ]);
  });
});

describe('resourceMismatch', () => {
  it('accepts a payment naming no resource or this one, and refuses another', () => {
    const here = 'https://ri.example.org/v1/elements/Fe/history';
    expect(resourceMismatch(payment({}), here)).toEqual([]);
    expect(resourceMismatch(payment({}, here), here)).toEqual([]);
    expect(resourceMismatch(payment({}, `${here}?resolution=daily`), here)).toEqual([
      { field: 'resource', sent: `${here}?resolution=daily`, expected: here },
    ]);
  });
});

import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';

/**
 * The terms are the service's, not the payer's: a payment is taken only for the offer it was
 * given, whatever a facilitator would accept. These checks run before any facilitator is asked.
 */

/** How far ahead of this server's clock a payer's may run (a validity that long past the terms is still accepted). */
export const CLOCK_SKEW_SECONDS = 60;

/** One field of a payment that is not what the terms say. */
export interface TermsMismatch {
  field: string;
  sent: string;
  expected: string;
}

const OFFER_FIELDS = ['scheme', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds'] as const;

/**
 * The fields in which the offer a payment says it accepted differs from the service's offer on
 * its network (every field, when no offer is on that network).
 */
export function acceptedMismatch(
  accepted: PaymentRequirements,
  offers: readonly PaymentRequirements[],
): TermsMismatch[] {
  const offer = offers.find((o) => o.network === accepted.network);
  if (!offer)
    return [
      {
        field: 'network',
        sent: String(accepted.network),
        expected: offers.map((o) => o.network).join(' or ') || 'none offered now',
      },
    ];
  const differ = OFFER_FIELDS.filter((f) => String(accepted[f]) !== String(offer[f])).map((f) => ({
    field: f,
    sent: String(accepted[f]),
    expected: String(offer[f]),
  }));
  // Same core fields, other `extra` (the token's EIP-712 name and version, for example).
  return differ.length > 0 ? differ : [{ field: 'extra', sent: 'other', expected: 'as offered' }];
}

/**
 * The fields of a signed EIP-3009 authorization (EVM `exact`) that the terms do not allow: the
 * recipient and the amount must be the offer's, and the validity no longer than the offer's
 * `maxTimeoutSeconds` from now (a payer who signs for ten years could repeat the call for ten
 * years). Payloads of other kinds (Solana's signed transaction) are checked by the facilitator.
 */
export function authorizationMismatch(
  payload: PaymentPayload,
  offer: PaymentRequirements,
  nowSeconds: number,
): TermsMismatch[] {
  const auth = (payload.payload as { authorization?: Record<string, unknown> }).authorization;
  if (!auth || typeof auth !== 'object') return [];
  const out: TermsMismatch[] = [];
  const to = String(auth.to ?? '');
  if (to.toLowerCase() !== offer.payTo.toLowerCase())
    out.push({ field: 'authorization.to', sent: to, expected: offer.payTo });
  const value = integer(auth.value);
  if (value === null || value !== BigInt(offer.amount))
    out.push({ field: 'authorization.value', sent: String(auth.value), expected: offer.amount });
  const latest = nowSeconds + offer.maxTimeoutSeconds + CLOCK_SKEW_SECONDS;
  const before = integer(auth.validBefore);
  if (before === null || before > BigInt(latest))
    out.push({
      field: 'authorization.validBefore',
      sent: String(auth.validBefore),
      expected: `at most ${latest} (now + maxTimeoutSeconds ${offer.maxTimeoutSeconds})`,
    });
  const after = integer(auth.validAfter);
  if (after === null || after > BigInt(nowSeconds + CLOCK_SKEW_SECONDS))
    out.push({
      field: 'authorization.validAfter',
      sent: String(auth.validAfter),
      expected: `at most ${nowSeconds}`,
    });
  return out;
}

/** The resource the payment names, when it names one, must be the one asked for. */
export function resourceMismatch(payload: PaymentPayload, url: string): TermsMismatch[] {
  const named = payload.resource?.url;
  return named === undefined || named === url ? [] : [{ field: 'resource', sent: named, expected: url }];
}

/** The mismatches as a sentence for the payer. */
export function mismatchText(mismatches: readonly TermsMismatch[]): string {
  return `the payment is not for these terms: ${mismatches
    .map((m) => `${m.field} is ${m.sent}, the terms say ${m.expected}`)
    .join('; ')}`;
}

function integer(v: unknown): bigint | null {
  if (typeof v !== 'string' && typeof v !== 'number') return null;
  try {
    return BigInt(v);
  } catch {
    return null;
  }
}

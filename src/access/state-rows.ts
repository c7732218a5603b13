/**
 * What the two state stores do the same way once a statement has run: the columns they read, the
 * mapping of a row to the interface's types, and creating a key with a fresh prefix on a
 * collision. The statements themselves stay in each store (placeholders and time functions differ).
 */

import { generateApiKey } from './api-keys.js';
import { generateFeedToken } from './feed-tokens.js';
import type { NewPayment } from './payment-ledger.js';
import { parsePlan } from './plans.js';
import {
  type Account,
  type FeedTokenInfo,
  type KeyInfo,
  PREFIX_ATTEMPTS,
  type WebSession,
} from './state-store.js';

/** A time as a driver gives it: ISO 8601 text from SQLite, a Date from PostgreSQL's timestamptz. */
type DbTime = string | Date;

function isoTime(t: DbTime): string;
function isoTime(t: DbTime | null): string | null;
function isoTime(t: DbTime | null): string | null {
  return t === null ? null : typeof t === 'string' ? t : t.toISOString();
}

export interface AccountRow {
  id: string;
  email: string | null;
  plan: string;
  created_at: DbTime;
}

export interface KeyRow {
  prefix: string;
  key_hash: string;
  account_id: string;
  email: string | null;
  plan: string;
  created_at: DbTime;
  revoked_at: DbTime | null;
  last_used_at: DbTime | null;
  name: string | null;
}

export interface FeedTokenRow {
  prefix: string;
  token_hash: string;
  account_id: string;
  plan: string;
  created_at: DbTime;
  revoked_at: DbTime | null;
}

/** feed_tokens as f joined to accounts as a. */
export const FEED_TOKEN_COLUMNS = 'f.prefix, f.token_hash, f.account_id, a.plan, f.created_at, f.revoked_at';

/** Leaves out token_hash on purpose, as toKeyInfo does key_hash. */
export function toFeedTokenInfo(row: FeedTokenRow): FeedTokenInfo {
  return {
    prefix: row.prefix,
    accountId: row.account_id,
    plan: parsePlan(row.plan),
    createdAt: isoTime(row.created_at),
    revokedAt: isoTime(row.revoked_at),
  };
}

/**
 * A new feed token stored by `insert` (its prefix and sha256), a fresh one drawn on a prefix
 * collision, as createKeyRetrying does for keys.
 */
export async function createFeedTokenRetrying(
  insert: (prefix: string, hash: string) => unknown,
  collided: (error: unknown) => boolean,
): Promise<{ token: string; prefix: string }> {
  for (let attempt = 1; ; attempt++) {
    const { token, prefix, hash } = generateFeedToken();
    try {
      await insert(prefix, hash);
      return { token, prefix };
    } catch (error) {
      if (!collided(error) || attempt >= PREFIX_ATTEMPTS) throw error;
    }
  }
}

export interface SessionRow {
  account_id: string;
  email: string;
  plan: string;
  csrf: string;
  expires_at: DbTime;
}

export const ACCOUNT_COLUMNS = 'id, email, plan, created_at';
/** api_keys as k joined to accounts as a. */
export const KEY_COLUMNS =
  'k.prefix, k.key_hash, k.account_id, a.email, a.plan, k.created_at, k.revoked_at, k.last_used_at, k.name';
/** sessions as s joined to accounts as a. */
export const SESSION_COLUMNS = 's.account_id, a.email, a.plan, s.csrf, s.expires_at';

export function toAccount(row: AccountRow): Account {
  return { id: row.id, email: row.email, plan: parsePlan(row.plan), createdAt: isoTime(row.created_at) };
}

/** Leaves out key_hash on purpose: KeyInfo goes to listings and logs. */
export function toKeyInfo(row: KeyRow): KeyInfo {
  return {
    prefix: row.prefix,
    accountId: row.account_id,
    email: row.email,
    plan: parsePlan(row.plan),
    createdAt: isoTime(row.created_at),
    revokedAt: isoTime(row.revoked_at),
    lastUsedAt: isoTime(row.last_used_at),
    name: row.name,
  };
}

export function toSession(row: SessionRow): WebSession {
  return {
    accountId: row.account_id,
    email: row.email,
    plan: parsePlan(row.plan),
    csrf: row.csrf,
    expiresAt: isoTime(row.expires_at),
  };
}

/**
 * A new ledger row's values in the column order both stores insert: id, operation, resource,
 * amount, network, asset, payer, nonce, payment_id.
 */
export function paymentValues(row: NewPayment): (string | null)[] {
  return [
    row.payloadHash,
    row.validUntil,
    row.dataVersion,
    row.id,
    row.operation,
    row.resource,
    row.amount,
    row.network,
    row.asset,
    row.payer,
    row.nonce,
    row.paymentId ?? null,
  ];
}

/**
 * A new key stored by `insert` (its prefix and sha256): on a prefix collision, which `collided`
 * recognises in the error, a fresh key is drawn, up to PREFIX_ATTEMPTS times. Any other error
 * (an unknown account) is thrown as it is.
 */
export async function createKeyRetrying(
  insert: (prefix: string, hash: string) => unknown,
  collided: (error: unknown) => boolean,
): Promise<{ key: string; prefix: string }> {
  for (let attempt = 1; ; attempt++) {
    const { key, prefix, hash } = generateApiKey();
    try {
      await insert(prefix, hash);
      return { key, prefix };
    } catch (error) {
      if (!collided(error) || attempt >= PREFIX_ATTEMPTS) throw error;
    }
  }
}

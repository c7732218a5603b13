/**
 * The state store: accounts, their plans and their API keys, lab quotes, and the payments ledger. Two implementations with the same
 * behaviour: embedded SQLite (one process, the default) and PostgreSQL (several replicas).
 *
 * Nothing here caches keys or plans: every authenticate() reads the database, so a key created,
 * revoked or re-planned through one process is honoured by every other process at once.
 */
import type { PaymentLedger } from './payment-ledger.js';
import type { Plan } from './plans.js';
import type { WebhookOutbox } from './webhook-outbox.js';

export interface Account {
  id: string;
  /** Lower-cased and trimmed; unique when not null. */
  email: string | null;
  plan: Plan;
  /** ISO 8601, UTC. */
  createdAt: string;
}

export interface KeyInfo {
  prefix: string;
  accountId: string;
  email: string | null;
  /** The account's current plan. */
  plan: Plan;
  createdAt: string;
  revokedAt: string | null;
  /**
   * Last successful authentication, to about a minute (not written on every request; written
   * aside the answer, so a store that cannot write still authenticates).
   */
  lastUsedAt?: string | null;
  /** The name its owner gave it on the account page, if any. */
  name?: string | null;
}

/** A feed token as the store gives it: never the token, never its hash. */
export interface FeedTokenInfo {
  prefix: string;
  accountId: string;
  /** The account's current plan: what the token's feeds are answered as. */
  plan: Plan;
  createdAt: string;
  revokedAt: string | null;
}

/** A signed-in web session, with its account as it is now. */
export interface WebSession {
  accountId: string;
  email: string;
  plan: Plan;
  /** The session's CSRF token: every form of a signed-in page carries it. */
  csrf: string;
  expiresAt: string;
}

export interface StateStore extends PaymentLedger, WebhookOutbox {
  /** Idempotent, versioned migrations (table schema_migrations); safe to run from two processes at once. */
  migrate(): Promise<void>;
  /** Throws AccountExistsError when the email is already taken. */
  createAccount(input: { email: string | null; plan: Plan }): Promise<Account>;
  findAccountByEmail(email: string): Promise<Account | null>;
  /** Throws StateNotFoundError when there is no account with that email. */
  setPlan(email: string, plan: Plan): Promise<Account>;
  /** The only time the full key is returned; only its sha256 is stored. Throws StateNotFoundError for an unknown account. */
  createKey(accountId: string, name?: string | null): Promise<{ key: string; prefix: string }>;
  /** Null for a malformed, unknown or revoked key; otherwise the key with its account's current plan. */
  authenticate(key: string): Promise<KeyInfo | null>;
  /** Every key (or one account's), revoked ones included, oldest first. Never the key or its hash. */
  listKeys(filter?: { accountId?: string }): Promise<KeyInfo[]>;
  /** False when there is no active key with that prefix (owned by that account, when one is given). */
  revokeKey(prefix: string, accountId?: string): Promise<boolean>;
  /**
   * A feed token for the account (feed-tokens.ts): the only time the whole token is returned;
   * only its sha256 is stored. Throws StateNotFoundError for an unknown account.
   */
  createFeedToken(accountId: string): Promise<{ token: string; prefix: string }>;
  /** Null for a malformed, unknown or revoked feed token; otherwise it with its account's current plan. */
  authenticateFeedToken(token: string): Promise<FeedTokenInfo | null>;
  /** One account's feed tokens (every account's when none is given), revoked ones included, oldest first. Never the token or its hash. */
  listFeedTokens(accountId?: string): Promise<FeedTokenInfo[]>;
  /** False when there is no active feed token with that prefix (of that account, when one is given). */
  revokeFeedToken(prefix: string, accountId?: string): Promise<boolean>;
  /** Adds calls to each key's count for a month (YYYY-MM, UTC); several replicas add up. */
  addUsage(month: string, calls: ReadonlyMap<string, number>): Promise<void>;
  /** Calls per key prefix in a month, for one account's keys. */
  usage(accountId: string, month: string): Promise<Map<string, number>>;
  /**
   * Sign-in links (the web account page): only the token's sha256 is stored. take() returns the
   * email once, for an unexpired token, and never again (single use, even between replicas).
   */
  saveSignInToken(tokenHash: string, email: string, expiresAt: string): Promise<void>;
  takeSignInToken(tokenHash: string): Promise<string | null>;
  /** Web sessions, stored by the sha256 of the cookie's value. */
  createSession(session: NewSession): Promise<void>;
  /** Null when unknown or expired. */
  findSession(idHash: string): Promise<WebSession | null>;
  deleteSession(idHash: string): Promise<void>;
  /** Keeps a lab quote (its JSON as returned) for runs by quote_id; the same id replaces the older copy. */
  saveQuote(quote: StoredQuote): Promise<void>;
  /** The stored quote's JSON, or null when there is none with that id. */
  findQuote(id: string): Promise<string | null>;
  /**
   * A named secret shared by every replica: the stored value, or `generate()` stored and returned
   * when there is none yet (the first process to store wins; the others read its value).
   */
  secret(name: string, generate: () => string): Promise<string>;
  /** Resolves when the store answers a trivial query (for /readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A web session to store: the sha256 of its cookie's value, its account, CSRF token and expiry (ISO 8601). */
export interface NewSession {
  idHash: string;
  accountId: string;
  csrf: string;
  expiresAt: string;
}

export interface StoredQuote {
  id: string;
  /** The quote as returned to the caller, JSON. */
  body: string;
  /** ISO 8601; expired quotes are pruned a day after they expire. */
  expiresAt: string;
}

/** Expired quotes are kept this long (a run of an expired quote still says "expired", not "unknown"). */
export const QUOTE_RETENTION_MS = 24 * 60 * 60 * 1000;

export class StateNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StateNotFoundError';
  }
}

export class AccountExistsError extends Error {
  constructor(readonly email: string) {
    super(`an account with email ${email} already exists`);
    this.name = 'AccountExistsError';
  }
}

export class StateUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StateUrlError';
  }
}

/** Emails are compared case-insensitively: stored and looked up lower-cased and trimmed. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Attempts at a fresh random prefix when one collides (36^8 values: a collision is very rare). */
export const PREFIX_ATTEMPTS = 5;

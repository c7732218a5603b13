/**
 * The webhooks' part of the state store: subscriptions (an account's URL, the subjects it
 * follows, the least move, its signing secret) and the outbox of events to deliver, with the log
 * of attempts. Both stores implement it with the same behaviour; the outbox is shared by every
 * replica on PostgreSQL, where claimEvents hands each due event to one replica only (FOR UPDATE
 * SKIP LOCKED, then a lease), so an event is sent once however many replicas run.
 */
import { randomBytes } from 'node:crypto';
import type { Plan } from './plans.js';

/** A subscription as the store lists it: never its secret. */
export interface WebhookSubscription {
  id: string;
  accountId: string;
  /** The account's current plan: what decides whether events are still made for it. */
  plan: Plan;
  url: string;
  /** kind/id, as /v1/changes names subjects: element/Fe, topic/T10074, keyword/<slug>. */
  subjects: string[];
  /** The least RIS move (points) that makes an event. */
  minMove: number;
  /** The data version served when it was made: events come from publications after it. */
  createdVersion: string | null;
  createdAt: string;
}

export interface NewWebhookSubscription {
  accountId: string;
  url: string;
  subjects: string[];
  minMove: number;
  /** whsec_...: kept as it is, as it signs every delivery (signature.ts). */
  secret: string;
  createdVersion: string | null;
}

export interface NewWebhookEvent {
  /** Stable for a data version, a subscription and a subject (events.ts). */
  id: string;
  subscriptionId: string;
  dataVersion: string;
  /** The JSON delivered, the same at every attempt. */
  body: string;
}

/** An event handed to one sender, with what it needs to send it. */
export interface ClaimedWebhookEvent {
  id: string;
  subscriptionId: string;
  body: string;
  /** Attempts so far, this one included. */
  attempts: number;
  createdAt: string;
  url: string;
  secret: string;
}

/** What one attempt gave, for the log and the outbox. */
export interface WebhookAttempt {
  eventId: string;
  subscriptionId: string;
  /** ISO 8601. */
  at: string;
  /** delivered; retrying (nextAttemptAt set); failed (no more attempts). */
  outcome: 'delivered' | 'retrying' | 'failed';
  status: number | null;
  error: string | null;
  /** When a retrying event is due again (ISO 8601). */
  nextAttemptAt?: string;
}

export interface WebhookOutbox {
  /**
   * Stores the subscription unless the account holds `limit` already (null then): counted and
   * inserted in one statement.
   */
  createWebhookSubscription(
    input: NewWebhookSubscription,
    limit: number,
  ): Promise<WebhookSubscription | null>;
  /** One account's subscriptions (every account's when none is given), oldest first. */
  listWebhookSubscriptions(accountId?: string): Promise<WebhookSubscription[]>;
  /** Where and with what secret a subscription of this account is sent; null when it has none with that id. */
  webhookTarget(id: string, accountId?: string): Promise<{ url: string; secret: string } | null>;
  /** Deletes it with its pending events and its log: nothing is sent for it afterwards. */
  deleteWebhookSubscription(id: string, accountId?: string): Promise<boolean>;
  /** Adds the events not stored yet (by id: made again by another replica, they are kept once); how many were new. */
  enqueueWebhookEvents(events: readonly NewWebhookEvent[], nowIso: string): Promise<number>;
  /** Up to `limit` due events, each leased to this caller until `leaseUntilIso` and its attempt counted. */
  claimWebhookEvents(limit: number, nowIso: string, leaseUntilIso: string): Promise<ClaimedWebhookEvent[]>;
  /**
   * Logs an attempt and, for an event of the outbox, sets its state (delivered, due again, failed).
   * Nothing is written for a subscription deleted meanwhile.
   */
  recordWebhookAttempt(attempt: WebhookAttempt): Promise<void>;
  /** The last `limit` attempts of an account's subscriptions, newest first. */
  webhookAttempts(accountId: string, limit: number): Promise<(WebhookAttempt & { url: string })[]>;
  /**
   * Deletes up to `limit` events delivered or failed that were made before `beforeIso`, but none
   * of `keepVersions` (publications the data served still holds: a server starting makes their
   * events again, and only the stored id keeps them from being sent twice), and up to `limit`
   * attempts logged before `beforeIso`. Pending events stay. Returns how many of each it deleted.
   */
  pruneWebhookOutbox(
    beforeIso: string,
    keepVersions: readonly string[],
    limit: number,
  ): Promise<{ events: number; attempts: number }>;
}

export const SUBSCRIPTION_COLUMNS =
  's.id, s.account_id, a.plan, s.url, s.subjects, s.min_move, s.created_version, s.created_at';

type DbTime = string | Date;
const iso = (t: DbTime) => (typeof t === 'string' ? t : t.toISOString());

export interface SubscriptionRow {
  id: string;
  account_id: string;
  plan: string;
  url: string;
  subjects: string;
  min_move: number;
  created_version: string | null;
  created_at: DbTime;
}

export function toSubscription(row: SubscriptionRow): WebhookSubscription {
  return {
    id: row.id,
    accountId: row.account_id,
    plan: row.plan as Plan,
    url: row.url,
    subjects: row.subjects.split('\n'),
    minMove: Number(row.min_move),
    createdVersion: row.created_version,
    createdAt: iso(row.created_at),
  };
}

export interface ClaimedRow {
  id: string;
  subscription_id: string;
  body: string;
  attempts: number;
  created_at: DbTime;
  url: string;
  secret: string;
}

export function toClaimed(row: ClaimedRow): ClaimedWebhookEvent {
  return {
    id: row.id,
    subscriptionId: row.subscription_id,
    body: row.body,
    attempts: Number(row.attempts),
    createdAt: iso(row.created_at),
    url: row.url,
    secret: row.secret,
  };
}

export interface AttemptRow {
  event_id: string;
  subscription_id: string;
  attempted_at: DbTime;
  outcome: string;
  response_status: number | null;
  error: string | null;
  url: string;
}

export function toAttempt(row: AttemptRow): WebhookAttempt & { url: string } {
  return {
    eventId: row.event_id,
    subscriptionId: row.subscription_id,
    at: iso(row.attempted_at),
    outcome: row.outcome as WebhookAttempt['outcome'],
    status: row.response_status,
    error: row.error,
    url: row.url,
  };
}

/** The outbox's state after an attempt. */
export function outboxStatus(attempt: WebhookAttempt): 'delivered' | 'pending' | 'failed' {
  return attempt.outcome === 'retrying' ? 'pending' : attempt.outcome;
}

/** A subscription's id: `whs_` and 12 hex digits (what `ri subscriptions delete` takes). */
export function newSubscriptionId(): string {
  return `whs_${randomBytes(6).toString('hex')}`;
}

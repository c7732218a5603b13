/**
 * The events a publication makes for a subscription: one per subscribed subject that moved at
 * least the subscription's min_move (or is new, gone, or its community turned), read from the
 * changes the snapshot recorded when it was built (core/changes.ts), as /v1/changes lists them.
 * Its id is a function of the data version, the subscription and the subject, so every replica,
 * and a restart, makes the same event, which the outbox keeps once.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  changesLevel,
  type Edition,
  KINDS,
  type Kind,
  PLAN_WEBHOOK_SUBSCRIPTIONS,
  planAllows,
} from '../access/policy.js';
import type { NewWebhookEvent, WebhookSubscription } from '../access/webhook-outbox.js';
import type { ChangeEntry } from '../contracts/changes.js';
import { elementChanges, subjectChanges } from '../core/changes.js';
import { ServiceError } from '../core/errors.js';
import { viewerFor } from '../core/viewer.js';
import type { ChangeQueries, SnapshotView, SubjectQueries } from '../snapshot/reader.js';

type ChangesView = SnapshotView<ChangeQueries & SubjectQueries>;

/** The event type of a subject's move. */
const SUBJECT_CHANGED = 'subject.changed';
/** The event type of a test-send. */
const WEBHOOK_TEST = 'webhook.test';

/** A subscribed subject as stored: kind/id. */
function splitSubject(subject: string): { type: Kind; id: string } | null {
  const at = subject.indexOf('/');
  const type = subject.slice(0, at) as Kind;
  const id = subject.slice(at + 1);
  return at > 0 && (KINDS as readonly string[]).includes(type) && id !== '' ? { type, id } : null;
}

/** The event id (webhook-id): the same for the same data version, subscription and subject. */
export function eventId(dataVersion: string, subscriptionId: string, type: string, id: string): string {
  const hash = createHash('sha256').update(`${dataVersion}\n${subscriptionId}\n${type}/${id}`).digest('hex');
  return `msg_${hash.slice(0, 32)}`;
}

/**
 * The data version from which a subscription's events are read: the one it was made at when the
 * snapshot's changes reach back to it (a replica down through several publications catches up),
 * else the last publication's. Null when there is nothing after it.
 */
function sinceFor(snapshot: ChangesView, createdVersion: string | null): string | null {
  if (createdVersion === snapshot.version) return null;
  const publications = snapshot.reader.changePublications();
  if (publications.length === 0) return null;
  if (createdVersion !== null && publications.some((p) => p.since === createdVersion)) return createdVersion;
  return publications[0]!.since;
}

/**
 * The data versions whose events `snapshot` can make (its publications': its own and those it
 * carries), so the outbox keeps their ids however old they are (dispatcher.ts prunes the rest).
 */
export function eventVersions(snapshot: ChangesView): string[] {
  return snapshot.reader.changePublications().map((p) => p.version ?? snapshot.version);
}

/** The body of a subject.changed event (docs/feeds.md#webhooks). */
function changedBody(subscriptionId: string, change: ChangeEntry, publicUrl: string, nowIso: string): string {
  const resource =
    change.subject_type === 'element'
      ? `/v1/elements/${encodeURIComponent(change.subject_id)}/changes`
      : `/v1/subjects/${change.subject_type}/${encodeURIComponent(change.subject_id)}/changes`;
  const query = new URLSearchParams({ since: change.since, data_version: change.data_version });
  return JSON.stringify({
    type: SUBJECT_CHANGED,
    timestamp: nowIso,
    data: {
      subscription_id: subscriptionId,
      subject: { type: change.subject_type, id: change.subject_id, name: change.name },
      data_version: { before: change.since, after: change.data_version },
      change: change.change,
      direction: change.direction,
      move: change.move,
      ri: change.ri,
      ris: change.ris,
      hri: change.hri,
      rank: change.rank,
      rising: change.rising,
      links: { page: change.canonical_url, api: `${publicUrl}${resource}?${query}` },
    },
  });
}

/**
 * The events `snapshot` makes for `subscription`: none when its account's plan no longer holds
 * subscriptions, nor for subjects of a kind the plan does not read, nor for a subject the data
 * does not know.
 */
export function subscriptionEvents(
  snapshot: ChangesView,
  subscription: WebhookSubscription,
  options: { publicUrl: string; edition: Edition; nowIso: string },
): NewWebhookEvent[] {
  if (PLAN_WEBHOOK_SUBSCRIPTIONS[subscription.plan] === 0) return [];
  const since = sinceFor(snapshot, subscription.createdVersion);
  if (since === null) return [];
  const viewer = viewerFor(subscription.plan, options.edition, options.publicUrl);
  const filters = { since, min_move: subscription.minMove, limit: Number.MAX_SAFE_INTEGER };
  const events = new Map<string, NewWebhookEvent>();
  for (const text of subscription.subjects) {
    const subject = splitSubject(text);
    if (!subject || !planAllows(subscription.plan, changesLevel(subject.type), options.edition)) continue;
    let changes: ChangeEntry[];
    try {
      changes = (
        subject.type === 'element'
          ? elementChanges(snapshot, subject.id, filters, viewer)
          : subjectChanges(snapshot, subject.type, subject.id, filters, viewer)
      ).changes;
    } catch (error) {
      if (error instanceof ServiceError) continue; // A subject this data does not know.
      throw error;
    }
    for (const change of changes) {
      const id = eventId(change.data_version, subscription.id, change.subject_type, change.subject_id);
      events.set(id, {
        id,
        subscriptionId: subscription.id,
        dataVersion: change.data_version,
        body: changedBody(subscription.id, change, options.publicUrl, options.nowIso),
      });
    }
  }
  return [...events.values()];
}

/** A test-send: its own id each time, a body that says what it is. */
export function testMessage(subscriptionId: string, nowIso: string): { id: string; body: string } {
  return {
    id: `msg_test_${randomBytes(12).toString('hex')}`,
    body: JSON.stringify({
      type: WEBHOOK_TEST,
      timestamp: nowIso,
      data: {
        subscription_id: subscriptionId,
        message:
          'A test delivery from Research Intensity: the signature verifies with your subscription secret.',
      },
    }),
  };
}

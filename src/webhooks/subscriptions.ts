/**
 * Making, deleting and test-sending subscriptions: the one place the account page and `ri
 * subscriptions` go through, so both check the same things (the plan's limit and the kinds it
 * reads, the subjects, the least move, the URL) and answer the same stable codes.
 */

import type { Plan } from '../access/plans.js';
import {
  changesLevel,
  type Edition,
  PLAN_WEBHOOK_SUBSCRIPTIONS,
  planAllows,
  planLadder,
} from '../access/policy.js';
import type { StateStore } from '../access/state-store.js';
import type { WebhookSubscription } from '../access/webhook-outbox.js';
import type { Config } from '../config/config.js';
import { RisPoints } from '../contracts/changes.js';
import { FeedSubjectsQuery } from '../contracts/feeds.js';
import { canonicalSymbol } from '../core/elements.js';
import { ServiceError } from '../core/errors.js';
import { findSubject } from '../core/subjects.js';
import type { ChangeQueries, SnapshotView, SubjectQueries } from '../snapshot/reader.js';
import type { Backoff } from './backoff.js';
import { type DeliveryOptions, type DeliveryResult, deliverWebhook } from './deliver.js';
import { testMessage } from './events.js';
import { generateWebhookSecret } from './signature.js';
import { checkWebhookUrl } from './url-check.js';

/** The webhooks' settings, from the configuration (WEBHOOK_*). */
export interface WebhookSettings extends DeliveryOptions, Backoff {
  /** How often each replica looks for due events (ms). */
  pollMs: number;
  /** How long delivered and failed events and logged attempts are kept (ms). */
  keepMs: number;
}

export function webhookSettings(config: Config): WebhookSettings {
  return {
    allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    baseMs: config.WEBHOOK_RETRY_BASE_MS,
    forMs: config.WEBHOOK_RETRY_FOR_MS,
    pollMs: config.WEBHOOK_POLL_MS,
    keepMs: config.WEBHOOK_KEEP_DAYS * 86_400_000,
  };
}

export interface SubscriptionRequest {
  url: string;
  /** kind/id, comma-separated (element/Fe,topic/T10074), as the feeds' subjects=. */
  subjects: string;
  /** RIS points, 0-100, as text (a form, a flag) or a number; empty: 0. */
  minMove: string | number;
}

type SubjectsView = SnapshotView<ChangeQueries & SubjectQueries>;

function planRequired(plan: Plan, edition: Edition, what: string): ServiceError {
  const required = planLadder(edition).find((p) => PLAN_WEBHOOK_SUBSCRIPTIONS[p] > 0) ?? 'personal';
  return new ServiceError(
    'plan_required',
    `${what} needs the ${required} plan or higher; this account has ${plan}.`,
    {
      required_plan: required,
    },
  );
}

/** The least move as /v1/changes takes min_move (RisPoints); empty: 0. */
function leastMove(value: string | number): number {
  const text = typeof value === 'string' ? value.trim() : value;
  const parsed = RisPoints.safeParse(text === '' ? undefined : text);
  if (!parsed.success)
    throw new ServiceError('invalid_parameter', 'min_move is a number of RIS points from 0 to 100.', {
      parameter: 'min_move',
    });
  return parsed.data;
}

/**
 * The subjects as stored (kind/id, each named once, elements by their symbol, topics and keywords
 * by their id in `snapshot` when there is one), or the problem with the first one refused.
 */
function subjectsOf(text: string, plan: Plan, edition: Edition, snapshot: SubjectsView | null): string[] {
  const parsed = FeedSubjectsQuery.safeParse(text);
  if (!parsed.success)
    throw new ServiceError(
      'invalid_parameter',
      `subjects: ${parsed.error.issues[0]?.message ?? 'not kind/id'}.`,
      {
        parameter: 'subjects',
      },
    );
  const out = new Set<string>();
  for (const s of parsed.data) {
    if (!planAllows(plan, changesLevel(s.type), edition))
      throw planRequired(plan, edition, `Following a ${s.type}`);
    if (s.type === 'element') out.add(`element/${canonicalSymbol(s.id)}`);
    else out.add(`${s.type}/${snapshot ? findSubject(snapshot, s.type, s.id).id : s.id}`);
  }
  return [...out];
}

/**
 * Checks and stores a subscription; the secret is returned here only. `snapshot` (the data
 * served) checks topic and keyword ids and is the version events start after; without one (the
 * command line) ids are checked for their form and `version` (the one published) is that version.
 */
export async function subscribe(
  state: StateStore,
  account: { id: string; plan: Plan },
  request: SubscriptionRequest,
  context: {
    edition: Edition;
    settings: WebhookSettings;
    snapshot: SubjectsView | null;
    version?: string | null;
  },
): Promise<{ subscription: WebhookSubscription; secret: string }> {
  const { edition, settings, snapshot } = context;
  const limit = PLAN_WEBHOOK_SUBSCRIPTIONS[account.plan];
  if (limit === 0) throw planRequired(account.plan, edition, 'A webhook subscription');
  const subjects = subjectsOf(request.subjects, account.plan, edition, snapshot);
  const minMove = leastMove(request.minMove);
  const { url } = await checkWebhookUrl(request.url, settings, settings.resolve);
  const secret = generateWebhookSecret();
  const subscription = await state.createWebhookSubscription(
    {
      accountId: account.id,
      url: url.href,
      subjects,
      minMove,
      secret,
      createdVersion: snapshot?.version ?? null,
    },
    limit,
  );
  if (!subscription)
    throw new ServiceError(
      'subscription_limit',
      `The ${account.plan} plan holds ${limit} webhook subscription${limit === 1 ? '' : 's'}: delete one first, or see /pricing for more.`,
      { limit },
    );
  return { subscription, secret };
}

/** Deletes a subscription (of that account, when one is given): nothing is sent for it afterwards. */
export async function unsubscribe(state: StateStore, id: string, accountId?: string): Promise<void> {
  if (!(await state.deleteWebhookSubscription(id, accountId))) throw unknownSubscription(id);
}

function unknownSubscription(id: string): ServiceError {
  return new ServiceError(
    'unknown_subscription',
    `No webhook subscription ${id.slice(0, 40)} on this account.`,
  );
}

/**
 * Sends a webhook.test event to a subscription now (not through the outbox: its sender waits for
 * the answer) and logs the attempt with the others.
 */
export async function testSend(
  state: StateStore,
  id: string,
  accountId: string | undefined,
  settings: WebhookSettings,
): Promise<DeliveryResult & { eventId: string }> {
  const target = await state.webhookTarget(id, accountId);
  if (!target) throw unknownSubscription(id);
  const at = new Date();
  const message = testMessage(id, at.toISOString());
  const result = await deliverWebhook(target, message, settings, at.getTime());
  await state.recordWebhookAttempt({
    eventId: message.id,
    subscriptionId: id,
    at: at.toISOString(),
    outcome: result.ok ? 'delivered' : 'failed',
    status: result.status,
    error: result.error,
  });
  return { ...result, eventId: message.id };
}

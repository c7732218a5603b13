/**
 * Each server's webhook sender. At each publication it notices (the snapshot switch) and at start,
 * it makes the events of every subscription (events.ts) and adds them to the outbox in the state
 * store, where another replica's copies of the same events are kept once (their ids). Every
 * WEBHOOK_POLL_MS it claims the events due (each one by one replica: the store's lease), sends
 * them (deliver.ts) and records the outcome: delivered, due again after a backoff, or failed
 * once the retry window has passed. An attempt cut short by a crash is sent again when its lease
 * ends, with the same webhook-id, so a receiver that keeps ids sees it once. About once an hour
 * it prunes delivered and failed events and logged attempts older than WEBHOOK_KEEP_DAYS.
 */
import type { Edition } from '../access/policy.js';
import type { StateStore } from '../access/state-store.js';
import type { ClaimedWebhookEvent } from '../access/webhook-outbox.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';
import { nextAttemptAt } from './backoff.js';
import { deliverWebhook } from './deliver.js';
import { eventVersions, subscriptionEvents } from './events.js';
import type { WebhookSettings } from './subscriptions.js';

/** Events claimed at once by one server. */
const CLAIM_BATCH = 20;
/** How often each server prunes the outbox: its rows age by days, so an hour is soon enough. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;
/** Rows deleted per statement, so that one stays well inside the state store's deadline. */
const PRUNE_BATCH = 1000;

export interface DispatcherDeps {
  state: StateStore;
  snapshots: SnapshotManager;
  settings: WebhookSettings;
  publicUrl: string;
  edition: Edition;
  log: (msg: string, fields: Record<string, unknown>) => void;
}

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  /** The last round failed (the state store out of reach): logged once until one succeeds. */
  private failing = false;
  /** Enqueues under way (the switch's and the start's), awaited by stop(). */
  private readonly enqueues = new Set<Promise<void>>();
  /** When the outbox is pruned next (ms): the first round prunes. */
  private pruneAt = 0;

  constructor(private readonly deps: DispatcherDeps) {}

  start(): void {
    this.deps.snapshots.onSwitch((s) => this.enqueueFrom(s));
    const served = this.deps.snapshots.acquire();
    if (served) this.enqueueFrom(served, true);
    this.timer = setInterval(() => this.kick(), this.deps.settings.pollMs);
    this.timer.unref();
  }

  /** Makes the events of `snapshot` and sends those due; `acquired` when the caller holds it already. */
  private enqueueFrom(snapshot: Snapshot, acquired = false): void {
    if (this.stopped) {
      if (acquired) snapshot.release();
      return;
    }
    if (!acquired) snapshot.acquire();
    const job = this.enqueue(snapshot)
      .catch((e: Error) =>
        this.deps.log('webhook events not queued', { err: e.message, data_version: snapshot.version }),
      )
      .finally(() => {
        snapshot.release();
        this.enqueues.delete(job);
        this.kick();
      });
    this.enqueues.add(job);
  }

  private async enqueue(snapshot: Snapshot): Promise<void> {
    const subscriptions = await this.deps.state.listWebhookSubscriptions();
    if (subscriptions.length === 0) return;
    const nowIso = new Date().toISOString();
    const events = subscriptions.flatMap((s) =>
      subscriptionEvents(snapshot, s, { publicUrl: this.deps.publicUrl, edition: this.deps.edition, nowIso }),
    );
    const added = await this.deps.state.enqueueWebhookEvents(events, nowIso);
    if (added > 0) this.deps.log('webhook events queued', { events: added, data_version: snapshot.version });
  }

  /** Sends what is due now, unless a round is under way (then one more round follows it). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.rounds().finally(() => {
      this.running = null;
    });
  }

  private async rounds(): Promise<void> {
    do {
      this.again = false;
      try {
        while (!this.stopped && (await this.round()) === CLAIM_BATCH);
        if (this.failing) this.deps.log('webhook deliveries resumed', {});
        this.failing = false;
      } catch (e) {
        // Once per outage, not at every poll: the state store logs its own unavailability.
        if (!this.failing) this.deps.log('webhook deliveries not made', { err: (e as Error).message });
        this.failing = true;
      }
      if (!this.failing && Date.now() >= this.pruneAt) await this.prune();
    } while (this.again && !this.stopped);
  }

  /**
   * Deletes delivered and failed events and logged attempts older than WEBHOOK_KEEP_DAYS, batch by
   * batch, but not the events of a publication the data served still holds (a server starting
   * makes them again: their ids keep them from being sent twice). Not when nothing is served.
   */
  private async prune(): Promise<void> {
    this.pruneAt = Date.now() + PRUNE_EVERY_MS;
    const served = this.deps.snapshots.acquire();
    if (!served) return;
    let keep: string[];
    try {
      keep = eventVersions(served);
    } finally {
      served.release();
    }
    const before = new Date(Date.now() - this.deps.settings.keepMs).toISOString();
    const pruned = { events: 0, attempts: 0 };
    try {
      for (;;) {
        const batch = await this.deps.state.pruneWebhookOutbox(before, keep, PRUNE_BATCH);
        pruned.events += batch.events;
        pruned.attempts += batch.attempts;
        if (this.stopped || (batch.events < PRUNE_BATCH && batch.attempts < PRUNE_BATCH)) break;
      }
    } catch (e) {
      this.deps.log('webhook outbox not pruned', { err: (e as Error).message });
    }
    if (pruned.events + pruned.attempts > 0) this.deps.log('webhook outbox pruned', { ...pruned, before });
  }

  /** One claim and its sends; how many events it claimed. */
  private async round(): Promise<number> {
    const { settings } = this.deps;
    const now = Date.now();
    // The lease outlasts an attempt, so no other replica sends the event while this one does.
    const leaseUntil = new Date(now + 2 * settings.timeoutMs + 10_000).toISOString();
    const claimed = await this.deps.state.claimWebhookEvents(
      CLAIM_BATCH,
      new Date(now).toISOString(),
      leaseUntil,
    );
    await Promise.all(claimed.map((e) => this.send(e)));
    return claimed.length;
  }

  private async send(event: ClaimedWebhookEvent): Promise<void> {
    const { settings } = this.deps;
    const result = await deliverWebhook(event, { id: event.id, body: event.body }, settings);
    const at = Date.now();
    const retryAt = result.ok
      ? null
      : nextAttemptAt(Date.parse(event.createdAt), event.attempts, at, settings);
    await this.deps.state.recordWebhookAttempt({
      eventId: event.id,
      subscriptionId: event.subscriptionId,
      at: new Date(at).toISOString(),
      outcome: result.ok ? 'delivered' : retryAt === null ? 'failed' : 'retrying',
      status: result.status,
      error: result.error,
      ...(retryAt !== null ? { nextAttemptAt: new Date(retryAt).toISOString() } : {}),
    });
    if (!result.ok)
      this.deps.log('webhook delivery failed', {
        event: event.id,
        subscription: event.subscriptionId,
        attempts: event.attempts,
        status: result.status,
        err: result.error,
        retry: retryAt !== null,
      });
  }

  /** Stops claiming; resolves once the sends under way are recorded. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await Promise.allSettled([...this.enqueues]);
    await this.running;
  }
}

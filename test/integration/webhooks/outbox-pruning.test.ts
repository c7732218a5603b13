import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/access/state-store.js';
import type { NewWebhookEvent, WebhookAttempt } from '../../../src/access/webhook-outbox.js';
import { loadConfig } from '../../../src/config/config.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { WebhookDispatcher } from '../../../src/webhooks/dispatcher.js';
import { webhookSettings } from '../../../src/webhooks/subscriptions.js';
import { emptyState } from '../../helpers/app.js';
import { firstPublication, ingestAndBuild, many, NICKEL } from '../../helpers/changes-corpus.js';
import { until } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/works.js';

/**
 * The dispatcher prunes the outbox (WEBHOOK_KEEP_DAYS) on the SQLite state store, with a snapshot
 * served that holds one publication: finished events past the retention go, with their logged
 * attempts, but not a pending one, a recent one, nor one of the publication served (a server
 * starting would make it again, and only its id keeps it from being sent twice). Once an hour:
 * not again at the next round. The stores' statements on both engines: state-store.test.ts.
 */

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY).toISOString();

let manager: SnapshotManager;
let state: StateStore;
let dispatcher: WebhookDispatcher;
let B: string;
const logged: { msg: string; fields: Record<string, unknown> }[] = [];

beforeAll(async () => {
  const dataDir = tempDir('ri-outbox-pruning-');
  const snapshots = join(dataDir, 'snapshots');
  await ingestAndBuild(dataDir, snapshots, firstPublication());
  B = (
    await ingestAndBuild(dataDir, snapshots, many(3, 'Nickel electrodes for batteries', NICKEL, '2025-07-01'))
  ).version;
  manager = new SnapshotManager(snapshots);
  await manager.start(50);
  state = await emptyState();
}, 120_000);

afterAll(async () => {
  await dispatcher?.stop();
  manager?.stop();
  await state?.close();
});

describe('webhook outbox pruning', () => {
  it('prunes finished events and attempts past WEBHOOK_KEEP_DAYS at start, then not within the hour', async () => {
    const account = await state.createAccount({ email: 'pruning@example.org', plan: 'professional' });
    // Made at the version served: the start makes no events of its own for it.
    const sub = (await state.createWebhookSubscription(
      {
        accountId: account.id,
        url: 'https://hooks.example.org/ri',
        subjects: ['element/Ni'],
        minMove: 0,
        secret: 'whsec_dGVzdHNlY3JldHRlc3RzZWNyZXR0ZXN0c2VjcmV0MTI=',
        createdVersion: B,
      },
      20,
    ))!;
    const event = (name: string, dataVersion = '0123456789abcdef'): NewWebhookEvent => ({
      id: `msg_${name}`,
      subscriptionId: sub.id,
      dataVersion,
      body: '{}',
    });
    const record = (e: NewWebhookEvent, outcome: WebhookAttempt['outcome'], at: string) =>
      state.recordWebhookAttempt({
        eventId: e.id,
        subscriptionId: sub.id,
        at,
        outcome,
        status: outcome === 'delivered' ? 204 : 500,
        error: outcome === 'delivered' ? null : 'HTTP 500',
        // Not due during the test: the dispatcher does not send it.
        ...(outcome === 'retrying' ? { nextAttemptAt: new Date(Date.now() + DAY).toISOString() } : {}),
      });
    const old = [event('old_delivered'), event('old_failed'), event('old_pending'), event('served', B)];
    await state.enqueueWebhookEvents(old, daysAgo(31));
    await record(old[0]!, 'delivered', daysAgo(31));
    await record(old[1]!, 'failed', daysAgo(31));
    await record(old[2]!, 'retrying', daysAgo(31));
    await record(old[3]!, 'delivered', daysAgo(31));
    const recent = event('recent');
    await state.enqueueWebhookEvents([recent], daysAgo(29));
    await record(recent, 'delivered', daysAgo(29));

    dispatcher = new WebhookDispatcher({
      state,
      snapshots: manager,
      settings: webhookSettings(loadConfig({ WEBHOOK_KEEP_DAYS: '30', WEBHOOK_POLL_MS: '50' })),
      publicUrl: 'http://localhost:8080',
      edition: 'full',
      log: (msg, fields) => logged.push({ msg, fields }),
    });
    dispatcher.start();
    const pruned = await until(() => logged.find((l) => l.msg === 'webhook outbox pruned'), 10_000);
    expect(pruned.fields).toMatchObject({ events: 2, attempts: 4 });

    const log = await state.webhookAttempts(account.id, 20);
    expect(log.map((a) => [a.eventId, a.outcome])).toEqual([['msg_recent', 'delivered']]);

    // Not again at the next rounds: a finished event past the retention stays until the next hour.
    const later = event('later');
    await state.enqueueWebhookEvents([later], daysAgo(40));
    await record(later, 'failed', daysAgo(40));
    dispatcher.kick();
    await new Promise((r) => setTimeout(r, 300));
    expect(logged.filter((l) => l.msg === 'webhook outbox pruned')).toHaveLength(1);
    await dispatcher.stop();

    // Made again, a pruned event is new to the outbox; a kept one is not.
    const again = [old[0]!, old[1]!, old[2]!, old[3]!, recent, later];
    expect(await state.enqueueWebhookEvents(again, daysAgo(-1))).toBe(2);
    const pending = await state.claimWebhookEvents(100, daysAgo(-2), daysAgo(-3));
    expect(pending.map((e) => e.id).sort()).toEqual([
      'msg_old_delivered',
      'msg_old_failed',
      'msg_old_pending',
    ]);
  });
});

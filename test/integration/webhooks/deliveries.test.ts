import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { eventId } from '../../../src/webhooks/events.js';
import { emptyState } from '../../helpers/app.js';
import {
  COPPER,
  firstPublication,
  ingestAndBuild,
  LEARNING,
  many,
  NICKEL,
  paper,
} from '../../helpers/changes-corpus.js';
import { until } from '../../helpers/cli.js';
import { Browser, hidden, signInByMail, smtpSink } from '../../helpers/web.js';
import { type Answer, verified, webhookReceiver } from '../../helpers/webhook-receiver.js';
import { tempDir } from '../../helpers/works.js';

/**
 * Webhooks end to end over the real listener, on the embedded SQLite state store: subscriptions
 * made on /account by a signed-in reader, a small corpus published twice, and a receiver on
 * loopback (allowed by WEBHOOK_ALLOW_LOOPBACK) that verifies each delivery with the Standard
 * Webhooks reference library (standardwebhooks) and answers as each path says: 200, a 500 then
 * 200, no answer then 200, a redirect. Short backoff and timeout by configuration.
 */

let dataDir: string;
let manager: SnapshotManager;
let server: RunningServer;
let state: StateStore;
let smtp: Awaited<ReturnType<typeof smtpSink>>;
let receiver: Awaited<ReturnType<typeof webhookReceiver>>;
let browser: Browser;
let key: string;
let A: string;
let B: string;
let config: ReturnType<typeof loadConfig>;
const EMAIL = 'hooks@example.org';
/** Each subscription's id and secret, by the receiver path it posts to. */
const subs: Record<string, { id: string; secret: string }> = {};

const answers: Record<string, (n: number) => Answer> = {
  '/flaky': (n) => (n === 0 ? 500 : 200),
  '/slow': (n) => (n === 0 ? 'hang' : 200),
  '/moved': () => ({ redirect: '/ok' }),
};

async function publish(records: Record<string, unknown>[]): Promise<string> {
  const built = await ingestAndBuild(dataDir, join(dataDir, 'snapshots'), records);
  expect(built.changed).toBe(true);
  await manager.refresh();
  return built.version;
}

/** The account page, signed in. */
async function accountPage(): Promise<string> {
  const res = await browser.get('/account');
  expect(res.status).toBe(200);
  return res.text();
}

/** Subscribes through the account page's form; the answer's status and page. */
async function subscribe(url: string, subjects: string, minMove = '0') {
  const csrf = hidden(await accountPage(), 'csrf');
  const res = await browser.post('/account/webhooks', { url, subjects, min_move: minMove, csrf });
  return { status: res.status, page: await res.text() };
}

/** Subscribes and keeps the id and the secret shown once. */
async function subscribed(path: string, subjects = 'element/Ni'): Promise<void> {
  const { status, page } = await subscribe(`${receiver.base}${path}`, subjects);
  expect([status, page.match(/role="alert">([^<]*)/)?.[1]]).toEqual([201, undefined]);
  const id = /Your new subscription (whs_[0-9a-f]{12})/.exec(page)![1]!;
  const secret = /id="newsecret" class="key" readonly value="(whsec_[^"]+)"/.exec(page)![1]!;
  subs[path] = { id, secret };
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

const refusedCode = (page: string) => /role="alert"><code>([a-z_]+)<\/code>/.exec(page)?.[1];

beforeAll(async () => {
  dataDir = tempDir('ri-webhooks-');
  manager = new SnapshotManager(join(dataDir, 'snapshots'));
  state = await emptyState();
  smtp = await smtpSink();
  receiver = await webhookReceiver(answers);
  A = await publish(firstPublication());
  await manager.start(50);
  // PUBLIC_URL is the server's own address: the sign-in mail's link and the payloads' links name it.
  const port = await freePort();
  config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    SMTP_URL: smtp.url,
    RATE_LIMIT_PER_IP: '1000000',
    RATE_LIMIT_PER_KEY: '1000000',
    WORKER_THREADS: '0',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_TIMEOUT_MS: '400',
    WEBHOOK_RETRY_BASE_MS: '100',
    WEBHOOK_RETRY_FOR_MS: '3000',
    WEBHOOK_POLL_MS: '50',
  });
  server = await startServer(config, manager, state, () => {});
  browser = new Browser(server.url);
  await signInByMail(browser, smtp.mails, EMAIL);
  await state.setPlan(EMAIL, 'professional');
  const account = (await state.findAccountByEmail(EMAIL))!;
  key = (await state.createKey(account.id)).key;
}, 120_000);

afterAll(async () => {
  await server?.close();
  manager?.stop();
  await state?.close();
  await receiver?.close();
  await smtp?.close();
});

describe('webhooks, SQLite state store', () => {
  it('refuses at save time: a private address, plain http to a public one, a bad subject or move', async () => {
    expect(refusedCode((await subscribe('https://10.1.2.3/hook', 'element/Ni')).page)).toBe(
      'webhook_url_refused',
    );
    expect(refusedCode((await subscribe('https://169.254.169.254/latest', 'element/Ni')).page)).toBe(
      'webhook_url_refused',
    );
    const http = await subscribe('http://93.184.215.14/hook', 'element/Ni');
    expect([http.status, refusedCode(http.page)]).toEqual([400, 'webhook_url_refused']);
    expect(http.page).toContain('loopback addresses only');
    expect(refusedCode((await subscribe(`${receiver.base}/ok`, 'element/Xx')).page)).toBe('unknown_symbol');
    expect(refusedCode((await subscribe(`${receiver.base}/ok`, 'topic/T999999')).page)).toBe(
      'unknown_subject',
    );
    expect(refusedCode((await subscribe(`${receiver.base}/ok`, 'planet/Mars')).page)).toBe(
      'invalid_parameter',
    );
    expect(refusedCode((await subscribe(`${receiver.base}/ok`, 'element/Ni', '101')).page)).toBe(
      'invalid_parameter',
    );
    expect(await state.listWebhookSubscriptions()).toEqual([]);
  });

  it('delivers each event of a publication once, signed, after retries where the receiver failed', async () => {
    await subscribed('/ok', 'element/Ni,topic/T200');
    await subscribed('/flaky');
    await subscribed('/slow');
    await subscribed('/moved');
    await subscribed('/removed');
    // Deleted before the publication: nothing is sent to it.
    const page = await accountPage();
    expect(page).toContain(subs['/removed']!.id);
    const csrf = hidden(page, 'csrf');
    expect((await browser.post(`/account/webhooks/${subs['/removed']!.id}/delete`, { csrf })).status).toBe(
      303,
    );
    expect(await accountPage()).not.toContain(subs['/removed']!.id);

    // B: nickel papers (Ni's RIS and the nickel community move), a new topic, a copper paper.
    B = await publish([
      ...many(3, 'Nickel electrodes for batteries', NICKEL, '2025-07-01'),
      ...many(4, 'Machine learning for materials discovery', LEARNING, '2025-08-01'),
      paper('Copper wires in circuits', COPPER, '2025-11-20'),
    ]);
    // What moved, as the API answers it: the oracle for what is delivered.
    const changesOf = async (path: string) =>
      (
        (await (
          await fetch(`${server.url}${path}?since=${A}`, { headers: { authorization: `Bearer ${key}` } })
        ).json()) as {
          changes: {
            subject_id: string;
            move: number;
            ris: unknown;
            ri: unknown;
            hri: unknown;
            rank: unknown;
          }[];
        }
      ).changes;
    const ni = (await changesOf('/v1/elements/Ni/changes'))[0]!;
    const nickelTopic = (await changesOf('/v1/subjects/topic/T200/changes'))[0]!;
    expect(ni.move).not.toBe(0);

    await until(() => (receiver.at('/ok').length >= 2 ? true : undefined), 15_000);
    await until(() => (receiver.at('/flaky').length >= 2 ? true : undefined), 15_000);
    await until(() => (receiver.at('/slow').length >= 2 ? true : undefined), 15_000);
    await until(() => (receiver.at('/moved').length >= 2 ? true : undefined), 15_000);
    // Time for any duplicate to come.
    await new Promise((r) => setTimeout(r, 1000));

    const ok = receiver.at('/ok');
    expect(ok).toHaveLength(2);
    const bodies = ok.map((r) => verified(subs['/ok']!.secret, r));
    expect(new Set(ok.map((r) => r.id)).size).toBe(2);
    const byType = Object.fromEntries(
      bodies.map((b) => [(b.data.subject as { type: string }).type, b]),
    ) as Record<string, { type: string; data: Record<string, unknown> }>;
    expect(byType.element!.type).toBe('subject.changed');
    expect(byType.element!.data).toMatchObject({
      subscription_id: subs['/ok']!.id,
      subject: { type: 'element', id: 'Ni', name: 'Nickel' },
      data_version: { before: A, after: B },
      move: ni.move,
      ri: ni.ri,
      ris: ni.ris,
      hri: ni.hri,
      rank: ni.rank,
    });
    expect(byType.topic!.data).toMatchObject({
      subject: { type: 'topic', id: 'T200' },
      move: nickelTopic.move,
    });
    // Every URL it prints answers.
    for (const b of bodies) {
      const { page, api } = b.data.links as { page: string; api: string };
      expect(page.startsWith(server.url)).toBe(true);
      expect((await fetch(page)).status).toBe(200);
      const res = await fetch(api, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { data_version: string }).data_version).toBe(B);
    }

    // A 500, then delivered: the same event (id, body), each attempt signed anew.
    const flaky = receiver.at('/flaky');
    expect(flaky).toHaveLength(2);
    expect(flaky[1]!.id).toBe(flaky[0]!.id);
    expect(flaky[1]!.body).toBe(flaky[0]!.body);
    for (const r of flaky) expect(verified(subs['/flaky']!.secret, r).type).toBe('subject.changed');
    // No answer within the timeout, then delivered.
    const slow = receiver.at('/slow');
    expect(slow).toHaveLength(2);
    expect(slow[1]!.id).toBe(slow[0]!.id);
    // The redirect is not followed: /ok got nothing of /moved's events.
    expect(bodies.every((b) => b.data.subscription_id === subs['/ok']!.id)).toBe(true);
    expect(receiver.at('/removed')).toHaveLength(0);
    // The event id is stable: a function of the data version, the subscription and the subject.
    expect(flaky[0]!.id).toBe(eventId(B, subs['/flaky']!.id, 'element', 'Ni'));
    expect(ok.map((r) => r.id).sort()).toEqual(
      [eventId(B, subs['/ok']!.id, 'element', 'Ni'), eventId(B, subs['/ok']!.id, 'topic', 'T200')].sort(),
    );
  }, 60_000);

  it('shows the delivery log on /account: times, outcomes, response codes, errors; fails after the window', async () => {
    const page = await accountPage();
    const rows = page.split('<caption>Delivery log')[1]!.split('<tr>').slice(2);
    const row = (id: string, outcome: string) =>
      rows.find((r) => r.includes(id) && r.includes(`data-label="Status">${outcome}<`));
    expect(row(subs['/flaky']!.id, 'retrying')).toContain('data-label="Response">500<');
    expect(row(subs['/flaky']!.id, 'delivered')).toContain('data-label="Response">200<');
    expect(row(subs['/slow']!.id, 'retrying')).toMatch(/no answer within 400 ms/);
    expect(row(subs['/slow']!.id, 'delivered')).toBeDefined();
    expect(row(subs['/moved']!.id, 'retrying')).toMatch(/redirect \(HTTP 302\) not followed/);
    // Retried while the window lasts (WEBHOOK_RETRY_FOR_MS, 3 s here), then failed, and no more.
    await until(
      async () => (/data-label="Status">failed</.test(await accountPage()) ? true : undefined),
      15_000,
    );
    const failed = (await accountPage()).split('<caption>Delivery log')[1]!.split('<tr>').slice(2);
    expect(failed.find((r) => r.includes(subs['/moved']!.id) && r.includes('>failed<'))).toMatch(/redirect/);
    const tries = receiver.at('/moved').length;
    expect(tries).toBeGreaterThanOrEqual(3);
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.at('/moved')).toHaveLength(tries);
    expect(new Set(receiver.at('/moved').map((r) => r.id)).size).toBe(1);
    expect(rows.some((r) => r.includes(subs['/removed']!.id))).toBe(false);
    expect(rows[0]).toMatch(/data-label="Time \(UTC\)">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d</);
  });

  it('sends a test event from the test-send button, and logs it', async () => {
    const before = receiver.at('/ok').length;
    const csrf = hidden(await accountPage(), 'csrf');
    const res = await browser.post(`/account/webhooks/${subs['/ok']!.id}/test`, { csrf });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/Test event msg_test_[0-9a-f]+ delivered \(HTTP 200\)/);
    const got = receiver.at('/ok').slice(before);
    expect(got).toHaveLength(1);
    expect(verified(subs['/ok']!.secret, got[0]!)).toMatchObject({
      type: 'webhook.test',
      data: { subscription_id: subs['/ok']!.id },
    });
    expect(await accountPage()).toContain(got[0]!.id);
    // Another account's subscription, or none: 404 unknown_subscription.
    const other = await browser.post('/account/webhooks/whs_000000000000/test', { csrf });
    expect(other.status).toBe(404);
    expect(refusedCode(await other.text())).toBe('unknown_subscription');
  });

  it('refuses at send time: an address refused since it was saved is recorded as a failure', async () => {
    // Saved when its address was allowed (here: stored as it is, past the save check), refused
    // at the send: no request leaves, the log says why.
    const account = (await state.findAccountByEmail(EMAIL))!;
    const stored = (await state.createWebhookSubscription(
      {
        accountId: account.id,
        url: 'https://10.0.0.7/hook',
        subjects: ['element/Ni'],
        minMove: 0,
        secret: subs['/ok']!.secret,
        createdVersion: A,
      },
      100,
    ))!;
    const csrf = hidden(await accountPage(), 'csrf');
    const res = await browser.post(`/account/webhooks/${stored.id}/test`, { csrf });
    expect(await res.text()).toMatch(
      /not delivered: The host 10\.0\.0\.7 resolves to 10\.0\.0\.7, a private/,
    );
    await state.deleteWebhookSubscription(stored.id);
  });

  it('holds each plan to its number of subscriptions', async () => {
    // Professional holds 20: four are held; the fifth of a personal account (3) is refused.
    const personal = new Browser(server.url);
    await signInByMail(personal, smtp.mails, 'personal-hooks@example.org');
    // Free: none.
    let csrf = hidden(await (await personal.get('/account')).text(), 'csrf');
    const free = await personal.post('/account/webhooks', {
      url: `${receiver.base}/p`,
      subjects: 'element/Fe',
      csrf,
    });
    expect([free.status, refusedCode(await free.text())]).toEqual([403, 'plan_required']);
    await state.setPlan('personal-hooks@example.org', 'personal');
    csrf = hidden(await (await personal.get('/account')).text(), 'csrf');
    for (let i = 0; i < 3; i++)
      expect(
        (
          await personal.post('/account/webhooks', {
            url: `${receiver.base}/p${i}`,
            subjects: 'element/Fe',
            csrf,
          })
        ).status,
      ).toBe(201);
    const fourth = await personal.post('/account/webhooks', {
      url: `${receiver.base}/p3`,
      subjects: 'element/Fe',
      csrf,
    });
    expect([fourth.status, refusedCode(await fourth.text())]).toEqual([403, 'subscription_limit']);
    // /pricing states each plan's number, from the plan table.
    expect(await (await fetch(`${server.url}/pricing`)).text()).toContain(
      'Subscriptions an account holds, by plan: Free 0, Personal 3, Professional 20.',
    );
    // The form is gone once the plan's subscriptions are all held.
    expect(await (await personal.get('/account')).text()).not.toContain('action="/account/webhooks"');
  });

  it('limits subscriptions made and test events sent per account and hour', async () => {
    const busy = new Browser(server.url);
    await signInByMail(busy, smtp.mails, 'busy-hooks@example.org');
    await state.setPlan('busy-hooks@example.org', 'professional');
    const csrf = hidden(await (await busy.get('/account')).text(), 'csrf');
    const made = await busy.post('/account/webhooks', {
      url: `${receiver.base}/busy`,
      subjects: 'element/Fe',
      csrf,
    });
    const id = /Your new subscription (whs_[0-9a-f]{12})/.exec(await made.text())![1]!;
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++)
      statuses.push((await busy.post(`/account/webhooks/${id}/test`, { csrf })).status);
    // The subscription and 29 tests; the 30th test is refused, and nothing is sent for it.
    expect(statuses.slice(0, 29).every((s) => s === 200)).toBe(true);
    expect(statuses[29]).toBe(429);
    expect(receiver.at('/busy')).toHaveLength(29);
    const refused = await busy.post(`/account/webhooks/${id}/test`, { csrf });
    expect([refused.status, refusedCode(await refused.text())]).toEqual([429, 'rate_limited']);
  });

  it('delivers, when a server starts, what was published while none ran; nothing twice', async () => {
    await server.close();
    const before = receiver.at('/ok').length;
    const C = await publish(many(3, 'Nickel electrodes for batteries', NICKEL, '2025-09-01'));
    expect(manager.version).toBe(C);
    // Nothing sends while no server runs.
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.at('/ok')).toHaveLength(before);
    server = await startServer(config, manager, state, () => {});
    const expected = ['/v1/elements/Ni/changes', '/v1/subjects/topic/T200/changes'].map(async (path) => {
      const res = await fetch(`${server.url}${path}?since=${B}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      return ((await res.json()) as { changes: unknown[] }).changes.length;
    });
    const count = (await Promise.all(expected)).reduce((a, b) => a + b, 0);
    expect(count).toBeGreaterThan(0);
    await until(() => (receiver.at('/ok').length >= before + count ? true : undefined), 15_000);
    await new Promise((r) => setTimeout(r, 500));
    const fresh = receiver.at('/ok').slice(before);
    expect(fresh).toHaveLength(count);
    // C's events only: B's, made again at the start (the subscription follows from A), are kept once.
    for (const r of fresh)
      expect((verified(subs['/ok']!.secret, r).data.data_version as { after: string }).after).toBe(C);
  });
});

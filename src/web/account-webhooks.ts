/**
 * The webhooks on /account: subscribe a URL to subjects' changes (the secret shown once), delete
 * a subscription, send it a test event, and the log of the last attempts. The checks and the
 * sending are src/webhooks' (subscriptions.ts), the same as `ri subscriptions`.
 */
import type { Context, Env, Hono } from 'hono';
import { PLAN_WEBHOOK_SUBSCRIPTIONS } from '../access/policy.js';
import type { RateLimiter } from '../access/rate-limiter.js';
import type { WebSession } from '../access/state-store.js';
import type { WebhookAttempt, WebhookSubscription } from '../access/webhook-outbox.js';
import { ServiceError } from '../core/errors.js';
import type { SnapshotManager } from '../snapshot/snapshot.js';
import { subscribe, testSend, unsubscribe, type WebhookSettings } from '../webhooks/subscriptions.js';
import { type Html, html } from './html.js';

/** Attempts the log on /account shows. */
export const DELIVERY_LOG_LENGTH = 20;
/**
 * Subscriptions made and test events sent per account and hour: each looks up a host and a test
 * posts to it, so the page must not be a way to make the service send requests at will.
 */
const WEBHOOK_ACTIONS_PER_HOUR = 30;

/** What the webhooks section says after a form: the new secret, or how a form or a test went. */
export interface WebhookNotice {
  created?: { subscription: WebhookSubscription; secret: string };
  /** A refusal (its stable code) or a test-send's outcome. */
  message?: { problem: boolean; text: string; code?: string };
}

export interface WebhookPageDeps {
  snapshots: SnapshotManager;
  webhooks: WebhookSettings;
}

/**
 * The section's routes. `page` renders the account page with a notice; `signedIn` gives the
 * session of a form allowed to act (else the answer to send instead).
 */
export function registerAccountWebhooks<E extends Env>(
  app: Hono<E>,
  deps: WebhookPageDeps & {
    state: Parameters<typeof subscribe>[0];
    edition: 'full' | 'enterprise';
    limiter: RateLimiter;
  },
  signedIn: (c: Context<E>) => Promise<{ session: WebSession; form: Record<string, unknown> } | Response>,
  page: (
    c: Context<E>,
    session: WebSession,
    notice: WebhookNotice,
    status: 200 | 201 | 400 | 403 | 404 | 429,
  ) => Promise<Response>,
): void {
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const refused = (c: Context<E>, session: WebSession, error: unknown) => {
    if (!(error instanceof ServiceError)) throw error;
    return page(
      c,
      session,
      { message: { problem: true, text: error.detail, code: error.code } },
      error.status as 400 | 403 | 404,
    );
  };

  /** The page saying the hour's actions are used up, or null when this one may go ahead. */
  const overLimit = async (c: Context<E>, session: WebSession) => {
    const hit = await deps.limiter.hit(`webhooks:${session.accountId}`, WEBHOOK_ACTIONS_PER_HOUR, 3600);
    if (hit.allowed) return null;
    const text = `At most ${WEBHOOK_ACTIONS_PER_HOUR} subscriptions made or test events sent per hour: try again in ${Math.ceil(hit.resetSeconds / 60)} minutes.`;
    return page(c, session, { message: { problem: true, text, code: 'rate_limited' } }, 429);
  };

  app.post('/account/webhooks', async (c) => {
    const allowed = await signedIn(c);
    if (allowed instanceof Response) return allowed;
    const { session, form } = allowed;
    const refusal = await overLimit(c, session);
    if (refusal) return refusal;
    const snapshot = deps.snapshots.acquire();
    try {
      const created = await subscribe(
        deps.state,
        { id: session.accountId, plan: session.plan },
        { url: text(form.url), subjects: text(form.subjects), minMove: text(form.min_move) },
        { edition: deps.edition, settings: deps.webhooks, snapshot },
      );
      return await page(c, session, { created }, 201);
    } catch (error) {
      return refused(c, session, error);
    } finally {
      snapshot?.release();
    }
  });

  app.post('/account/webhooks/:id/delete', async (c) => {
    const allowed = await signedIn(c);
    if (allowed instanceof Response) return allowed;
    try {
      await unsubscribe(deps.state, c.req.param('id'), allowed.session.accountId);
    } catch (error) {
      return refused(c, allowed.session, error);
    }
    return c.redirect('/account#webhooks', 303);
  });

  app.post('/account/webhooks/:id/test', async (c) => {
    const allowed = await signedIn(c);
    if (allowed instanceof Response) return allowed;
    const refusal = await overLimit(c, allowed.session);
    if (refusal) return refusal;
    try {
      const sent = await testSend(deps.state, c.req.param('id'), allowed.session.accountId, deps.webhooks);
      const text = sent.ok
        ? `Test event ${sent.eventId} delivered (HTTP ${sent.status}).`
        : `Test event ${sent.eventId} not delivered: ${sent.error}.`;
      return await page(c, allowed.session, { message: { problem: !sent.ok, text } }, 200);
    } catch (error) {
      return refused(c, allowed.session, error);
    }
  });
}

const when = (iso: string) => iso.slice(0, 19).replace('T', ' ');

/** The section of the account page. */
export function webhookSection(
  plan: WebSession['plan'],
  csrf: string,
  subscriptions: readonly WebhookSubscription[],
  attempts: readonly (WebhookAttempt & { url: string })[],
  notice: WebhookNotice,
): Html {
  const limit = PLAN_WEBHOOK_SUBSCRIPTIONS[plan];
  const hidden = html`<input type="hidden" name="csrf" value="${csrf}">`;
  const { created, message } = notice;
  return html`<h2 id="webhooks">Webhooks</h2>
<p>A webhook posts to your HTTPS address when a new data version moves a subject you follow by at least the least move you set (RIS points; a subject new or gone, or a community turning rising, always counts). Each delivery is signed as <a href="https://www.standardwebhooks.com">Standard Webhooks</a> (<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>) with the subscription's secret, and retried for a day. Your plan holds ${limit === 0 ? html`no subscriptions (<a href="/pricing">plans</a>)` : `${limit} subscription${limit === 1 ? '' : 's'}`}. More: <a href="/docs">docs</a> (feeds and webhooks).</p>
${message ? html`<p class="${message.problem ? 'problem' : 'status'}" role="${message.problem ? 'alert' : 'status'}">${message.code ? html`<code>${message.code}</code>: ` : html``}${message.text}</p>` : html``}
${
  created
    ? html`<div class="newkey" role="status"><h3>Your new subscription ${created.subscription.id}</h3><p>Copy its signing secret now: it is shown only this once. Verify each delivery with it (for example <code>new Webhook(secret).verify(body, headers)</code> of the <code>standardwebhooks</code> package).</p>
<p><label for="newsecret">Secret of ${created.subscription.id}</label><input id="newsecret" class="key" readonly value="${created.secret}"></p></div>`
    : html``
}
${
  subscriptions.length === 0
    ? html`<p>No webhook subscriptions yet.</p>`
    : html`<table class="data cards"><caption>Webhook subscriptions</caption><thead><tr><th scope="col">Id</th><th scope="col">URL</th><th scope="col">Subjects</th><th scope="col">Least move</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead><tbody>
${subscriptions.map(
  (s) =>
    html`<tr><td data-label="Id"><code>${s.id}</code></td><td data-label="URL">${s.url}</td><td data-label="Subjects">${s.subjects.join(', ')}</td><td data-label="Least move">${String(s.minMove)}</td><td data-label="Created">${s.createdAt.slice(0, 10)}</td><td data-label="Actions"><form method="post" action="/account/webhooks/${s.id}/test">${hidden}<button type="submit" aria-label="Send a test event to ${s.id}">Send a test event</button></form> <form method="post" action="/account/webhooks/${s.id}/delete">${hidden}<button type="submit" aria-label="Delete subscription ${s.id}">Delete</button></form></td></tr>`,
)}
</tbody></table>`
}
${
  limit > subscriptions.length
    ? html`<form class="stack" method="post" action="/account/webhooks">
<label for="webhookurl">HTTPS address to post to</label>
<input id="webhookurl" name="url" type="url" required maxlength="2000" placeholder="https://example.org/hooks/ri">
<label for="webhooksubjects">Subjects, comma-separated (as in /v1/changes)</label>
<input id="webhooksubjects" name="subjects" required maxlength="2000" placeholder="element/Fe,topic/T10074">
<label for="webhookmove">Least move, RIS points (0-100)</label>
<input id="webhookmove" name="min_move" inputmode="decimal" value="0">
${hidden}
<button type="submit">Subscribe</button>
</form>`
    : html``
}
${
  attempts.length === 0
    ? html`<p>No deliveries yet.</p>`
    : html`<table class="data cards"><caption>Delivery log: the last ${DELIVERY_LOG_LENGTH} attempts</caption><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Subscription</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Response</th><th scope="col">Error</th></tr></thead><tbody>
${attempts.map(
  (a) =>
    html`<tr><td data-label="Time (UTC)">${when(a.at)}</td><td data-label="Subscription"><code>${a.subscriptionId}</code></td><td data-label="Event"><code>${a.eventId}</code></td><td data-label="Status">${a.outcome}</td><td data-label="Response">${a.status === null ? '—' : String(a.status)}</td><td data-label="Error">${a.error ?? '—'}</td></tr>`,
)}
</tbody></table>`
}`;
}

import type { Context, Env, Hono } from 'hono';
import { editionText } from '../access/edition-text.js';
import type { Plan } from '../access/plans.js';
import {
  type Edition,
  isPriced,
  LAB_DEPTHS,
  LAB_LICENCE_ABOVE,
  LAB_QUOTE_USD,
  OPERATIONS,
  PAID_CALL_RULE,
  PLAN_WEBHOOK_SUBSCRIPTIONS,
  planLadder,
  usdText,
} from '../access/policy.js';
import type { RateLimiter } from '../access/rate-limiter.js';
import { priceInfo } from '../payments/discovery.js';
import { EMAIL, formExpired, mailNotSent, PRIVATE, readForm } from './account.js';
import { type Html, html, type Site } from './html.js';
import type { Mailer } from './mailer.js';
import { sha256, type WebSessions } from './session.js';

export interface PricingDeps {
  site: Site;
  sessions: WebSessions;
  mailer: Mailer;
  limiter: RateLimiter;
  publicUrl: string;
  edition: Edition;
  /** Whether this server takes per-call payments, and on which networks now. */
  payments: boolean;
  paymentNetworks?: () => string[];
  /** Each plan's monthly price in USD (PLAN_PRICE_*_USD); a plan without one is priced on request. */
  planPrices: Partial<Record<Plan, number>>;
  /** Where plan requests are mailed (OPERATOR_EMAIL); null: nowhere a reader can be answered from. */
  operatorEmail: string | null;
  /** Whether mail leaves this machine (SMTP_URL set); without it a request is printed on the log. */
  smtp: boolean;
  clientIp: (c: Context) => string;
  log: (msg: string, fields?: Record<string, unknown>) => void;
}

/** Plan requests asked for, per address and per client address, each hour. */
export const PLAN_REQUEST_LIMITS = { perEmail: 3, perIp: 10 };
const MESSAGE_MAX = 2000;

/** What each plan opens beyond the one below it, as a reader reads it. */
const OPENS: Record<Plan, string> = {
  free: 'API keys; element history by year (JSON or CSV); subject search, with keywords and paper counts on the pages too.',
  personal:
    'HRI; topics and keywords (scores, history, routed elements); top papers of elements and subjects (20 on the pages, 100 by CSV and API); monthly history; research.',
  professional:
    'Daily element history; the lab (quotes and runs); whole-table export files (Parquet and CSV).',
  enterprise:
    'Everything gated: HRI, topics and keywords, paper lists, monthly and daily history (the older edition).',
};

/**
 * /pricing (every upgrade_url): each plan's price from configuration, what it opens and how to get
 * it, then every call's access and per-call price from the access table. A plan is asked for at
 * /pricing/request, which mails the operator (OPERATOR_EMAIL) the way sign-in mail is sent.
 */
export function registerPricing<E extends Env>(app: Hono<E>, deps: PricingDeps): void {
  const takesRequests = deps.operatorEmail !== null || !deps.smtp;
  const gatedPlans = planLadder(deps.edition).filter((p) => p !== 'free');

  app.get('/pricing', (c) =>
    c.html(deps.site.page('Pricing', pricing(deps, takesRequests), { description: DESCRIPTION }), 200, {
      'cache-control': 'public, max-age=300',
    }),
  );

  app.get('/pricing/request', async (c) => {
    const session = await deps.sessions.current(c);
    const asked = c.req.query('plan');
    const plan = gatedPlans.find((p) => p === asked) ?? gatedPlans[0]!;
    if (!takesRequests) return c.html(deps.site.page('Ask for a plan', noRequests(deps)), 200, PRIVATE);
    return c.html(
      deps.site.page(
        'Ask for a plan',
        requestForm(deps, gatedPlans, plan, deps.sessions.formToken(c, session), session?.email),
      ),
      200,
      PRIVATE,
    );
  });

  app.post('/pricing/request', async (c) => {
    const form = await readForm(c);
    const session = await deps.sessions.current(c);
    if (!deps.sessions.formAllowed(c, session, form.csrf)) return formExpired(c, deps.site);
    if (!takesRequests) return c.html(deps.site.page('Ask for a plan', noRequests(deps)), 404, PRIVATE);
    const email = typeof form.email === 'string' ? form.email.trim().toLowerCase() : '';
    const plan = gatedPlans.find((p) => p === form.plan);
    const message = typeof form.message === 'string' ? form.message.trim().slice(0, MESSAGE_MAX) : '';
    if (email.length > 254 || !EMAIL.test(email) || !plan)
      return c.html(
        deps.site.page(
          'Ask for a plan',
          requestForm(
            deps,
            gatedPlans,
            plan ?? gatedPlans[0]!,
            deps.sessions.formToken(c, session),
            email,
            !plan ? 'Choose a plan.' : 'That does not look like an email address.',
          ),
        ),
        400,
        PRIVATE,
      );
    const hour = 3600;
    const [byEmail, byIp] = await Promise.all([
      deps.limiter.hit(`planrequest:email:${sha256(email)}`, PLAN_REQUEST_LIMITS.perEmail, hour),
      deps.limiter.hit(`planrequest:ip:${deps.clientIp(c)}`, PLAN_REQUEST_LIMITS.perIp, hour),
    ]);
    const refused = !byEmail.allowed ? byEmail : !byIp.allowed ? byIp : null;
    if (refused) {
      deps.log('plan request refused: hourly limit', { by: !byEmail.allowed ? 'email' : 'ip' });
      return c.html(
        deps.site.page(
          'Too many requests',
          html`<h1>Too many plan requests</h1><p>Your request was not sent. Try again in ${Math.ceil(refused.resetSeconds / 60)} minutes.</p>`,
        ),
        429,
        { ...PRIVATE, 'retry-after': String(refused.resetSeconds) },
      );
    }
    try {
      await deps.mailer.send({
        to: deps.operatorEmail ?? 'the operator (OPERATOR_EMAIL is not set)',
        replyTo: email,
        subject: `Plan request: ${plan} for ${email}`,
        text: `${email} asks for the ${plan} plan on ${deps.publicUrl}.\n${
          session && session.email === email ? `They are signed in; their plan is ${session.plan}.\n` : ''
        }\nMessage:\n${message || '(none)'}\n\nTo give it once agreed (the account is made if it does not exist):\n\n  ri keys create --plan ${plan} --email ${email}   # or, for an account that exists:\n  ri plans set ${email} ${plan}\n\nReply to this mail to answer them.\n`,
      });
    } catch (error) {
      deps.log('plan request mail failed', { err: (error as Error).message });
      return mailNotSent(c, deps.site, 'Request not sent', 'The request could not be sent');
    }
    return c.html(
      deps.site.page(
        'Request sent',
        html`<h1>Request sent</h1><p>The operator of this server has your request for the ${title(plan)} plan and will answer at <strong>${email}</strong>. Once the plan is given, keys of the account with that address open it (<a href="/account">account</a>).</p>`,
      ),
      200,
      PRIVATE,
    );
  });
}

const title = (plan: string) => `${plan[0]!.toUpperCase()}${plan.slice(1)}`;

const DESCRIPTION =
  'Plans and prices of the Research Intensity API and pages: what each plan opens, how to ask for one, and every call with its per-call price.';

/** A plan's configured monthly price ("19.00 USD a month", "free"), or null when none is configured. */
function planPrice(deps: PricingDeps, plan: Plan): string | null {
  if (plan === 'free') return 'free';
  const usd = deps.planPrices[plan];
  return usd === undefined ? null : `${usdText(usd)} a month`;
}

function noRequests(deps: PricingDeps): Html {
  return html`<h1>Ask for a plan</h1><p>This server takes no plan requests on the web: plans are given by its operator (<a href="${deps.publicUrl}/pricing">pricing</a>).</p>`;
}

function requestForm(
  deps: PricingDeps,
  plans: Plan[],
  plan: Plan,
  csrf: string,
  email?: string,
  problem?: string,
): Html {
  return html`<h1>Ask for a plan</h1>
${problem ? html`<p class="problem" role="alert">${problem}</p>` : html``}
<p>Your request goes to the operator of this server${deps.operatorEmail ? html` (<a href="mailto:${deps.operatorEmail}">${deps.operatorEmail}</a>)` : ''}, who answers by mail. The plan is given to the account with your address: <a href="/account">sign in</a> with it to make keys.</p>
<form class="stack" method="post" action="/pricing/request">
<label for="plan">Plan</label>
<select id="plan" name="plan">${plans.map((p) => html`<option value="${p}"${p === plan ? html` selected` : html``}>${title(p)}${planPrice(deps, p) === null ? '' : ` (${planPrice(deps, p)})`}</option>`)}</select>
<label for="email">Your email address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${email ?? ''}">
<label for="message">Anything the operator should know (optional)</label>
<textarea id="message" name="message" rows="4" maxlength="${MESSAGE_MAX}"></textarea>
<input type="hidden" name="csrf" value="${csrf}">
<button type="submit">Send the request</button>
</form>`;
}

function pricing(deps: PricingDeps, takesRequests: boolean): Html {
  const access = {
    public: 'no key',
    key: 'any key',
    personal: 'Personal',
    professional: 'Professional',
  } as const;
  const ops = OPERATIONS.filter(
    (o) => deps.edition === 'full' || !('fullEditionOnly' in o && o.fullEditionOnly),
  );
  const price = (o: (typeof OPERATIONS)[number]) => {
    const p = priceInfo(o);
    if ('usd' in p && p.usd !== undefined)
      return 'per' in p && p.per === 'symbol' ? `${usdText(p.usd)} per symbol` : usdText(p.usd);
    if ('tiers' in p && p.tiers)
      return p.tiers.map((t) => `${usdText(t.usd)} up to ${t.up_to_papers} papers`).join('; ');
    if ('by_depth_usd' in p)
      return Object.entries(p.by_depth_usd)
        .map(([d, u]) => `${usdText(u)} (${d})`)
        .join('; ');
    return 'free';
  };
  const mail = deps.operatorEmail
    ? html`<a href="mailto:${deps.operatorEmail}">${deps.operatorEmail}</a>`
    : null;
  // Each plan: its price, or, with none configured, one sentence on how to ask for it; what it
  // opens; then the way to get it (a button, which takes no punctuation after it).
  const section = (plan: Plan) => {
    const price = planPrice(deps, plan);
    const opens = html`<p>${OPENS[plan]}</p>`;
    const head = html`<section class="plan" id="plan-${plan}"><h3>${title(plan)}</h3>`;
    if (plan === 'free')
      return html`${head}<p class="price">free</p>${opens}<p><a href="/account">Sign in</a> with your email address: the first sign-in makes a free account, where you create keys.</p></section>`;
    if (!takesRequests)
      return html`${head}${price === null ? html`` : html`<p class="price">${price}</p>`}${opens}<p>${price === null ? 'Priced and given by the operator of this server, who takes no requests on this site.' : 'Given by the operator of this server, who takes no requests on this site.'}</p></section>`;
    const ask = html`<p><a class="ask" href="/pricing/request?plan=${plan}">Ask for the ${title(plan)} plan</a></p>`;
    if (price === null)
      return html`${head}<p class="price-ask">Priced on request: ask the operator of this server with the button below${mail ? html`, or write to ${mail}` : ''}.</p>${opens}${ask}</section>`;
    return html`${head}<p class="price">${price}</p>${opens}${ask}${mail ? html`<p>Or write to ${mail}.</p>` : html``}</section>`;
  };
  const webhookLimits = `${planLadder(deps.edition)
    .map((p) => `${title(p)} ${PLAN_WEBHOOK_SUBSCRIPTIONS[p]}`)
    .join(
      ', ',
    )}. ${editionText('Topics and keywords are followed from the Personal plan, as their changes are read', deps.edition)}`;
  return html`<h1>Plans and prices</h1>
<p>Every page and the current element scores are free. A key goes in <code>Authorization: Bearer &lt;API_KEY&gt;</code> (<a href="/account">account</a>); a signed-in account sees on the pages what its plan opens.</p>
<h2 id="plans">Plans</h2>
<div class="plans">${planLadder(deps.edition).map(section)}</div>
<h2 id="calls">Calls and per-call prices</h2>
<table class="data cards"><thead><tr><th scope="col">Call</th><th scope="col">With a key</th><th scope="col">Per call without a key</th></tr></thead><tbody>
${ops.map((o) => html`<tr><td data-label="Call"><code>${o.method} /v1${o.path}</code><br><span class="muted">${editionText(o.description, deps.edition)}</span></td><td data-label="With a key">${deps.edition === 'enterprise' && (o.access === 'personal' || o.access === 'professional') ? 'Enterprise' : access[o.access]}</td><td data-label="Per call">${!isPriced(o) ? 'free' : deps.payments ? price(o) : `${price(o)} (this server takes no per-call payment)`}</td></tr>`)}
</tbody></table>
<h2 id="webhooks">Webhook subscriptions</h2>
<p>A webhook subscription posts the changes of the subjects it follows to an HTTPS address at each publication (<a href="/account#webhooks">account</a>). Subscriptions an account holds, by plan: ${webhookLimits}.</p>
${
  deps.edition === 'full'
    ? html`<p>HRI is shown from the Personal plan. History: yearly with any key, monthly from Personal, daily (elements) from Professional.</p>
<h2 id="licence">Lab licences</h2>
<p>A lab query matching more than ${LAB_LICENCE_ABOVE.toLocaleString('en')} papers is offered as a data licence, not a per-call price: narrow the query, or ask the operator of this server${deps.operatorEmail ? html` (<a href="mailto:${deps.operatorEmail}">${deps.operatorEmail}</a>)` : ''}. Below that, a quote costs ${usdText(LAB_QUOTE_USD)} and a run costs the quoted depth (${Object.entries(
        LAB_DEPTHS,
      )
        .map(([d, v]) => `${d}: ${usdText(v.usd)}`)
        .join(', ')}) minus the quote.</p>
${deps.payments ? html`<h2>Paying per call</h2><p>Priced calls without a key answer 402 with x402 terms (USDC on ${(deps.paymentNetworks?.() ?? []).join(' or ') || 'no network at the moment'}): see <a href="/.well-known/x402">/.well-known/x402</a>. Errors are never charged.</p><p>${PAID_CALL_RULE}</p>` : html``}`
    : html``
}`;
}

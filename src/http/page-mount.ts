import type { OpenAPIHono } from '@hono/zod-openapi';
import { NETWORKS } from '../payments/networks.js';
import { registerAccount } from '../web/account.js';
import { registerDocs } from '../web/docs.js';
import { Site } from '../web/html.js';
import { createMailer } from '../web/mailer.js';
import { registerPages } from '../web/pages.js';
import { registerPricing } from '../web/pricing.js';
import { WebSessions } from '../web/session.js';
import { webhookSettings } from '../webhooks/subscriptions.js';
import type { AppServices } from './app-services.js';
import type { AppDeps, AppEnv } from './context.js';
import { clientIp } from './rate-limit.js';

/**
 * The web pages (src/web) on the app: the error docs, the periodic table and the answer pages,
 * /pricing and /account, with their sessions and the sign-in mailer. Returns the site's layout,
 * for the not-found page.
 */
export function mountPages(app: OpenAPIHono<AppEnv>, deps: AppDeps, services: AppServices): Site {
  const { lab, limiter, log, paymentsOn, usage } = services;
  const sessions = new WebSessions(deps.state, deps.config.publicUrl);
  const site = new Site({ edition: deps.config.EDITION, payments: paymentsOn });
  registerDocs(app, site);
  registerPages(app, {
    site,
    snapshots: deps.snapshots,
    publicUrl: deps.config.publicUrl,
    edition: deps.config.EDITION,
    payments: paymentsOn,
    sessions,
    lab,
    ...(deps.workerPool ? { workerPool: deps.workerPool } : {}),
  });
  const mailer =
    deps.mailer ??
    createMailer({
      smtpUrl: deps.config.SMTP_URL,
      from: deps.config.MAIL_FROM,
    });
  registerPricing(app, {
    site,
    sessions,
    mailer,
    limiter,
    publicUrl: deps.config.publicUrl,
    edition: deps.config.EDITION,
    payments: paymentsOn,
    paymentNetworks: () => (paymentsOn ? deps.payments!.offeredNow.map((n) => NETWORKS[n].label) : []),
    planPrices: {
      ...(deps.config.PLAN_PRICE_PERSONAL_USD === undefined
        ? {}
        : { personal: deps.config.PLAN_PRICE_PERSONAL_USD }),
      ...(deps.config.PLAN_PRICE_PROFESSIONAL_USD === undefined
        ? {}
        : { professional: deps.config.PLAN_PRICE_PROFESSIONAL_USD }),
      ...(deps.config.PLAN_PRICE_ENTERPRISE_USD === undefined
        ? {}
        : { enterprise: deps.config.PLAN_PRICE_ENTERPRISE_USD }),
    },
    operatorEmail: deps.config.OPERATOR_EMAIL ?? null,
    smtp: deps.config.SMTP_URL !== undefined,
    clientIp: (c) => clientIp(c, deps.config.TRUST_PROXY),
    log,
  });
  registerAccount(app, {
    site,
    state: deps.state,
    sessions,
    mailer,
    limiter,
    usage,
    publicUrl: deps.config.publicUrl,
    edition: deps.config.EDITION,
    clientIp: (c) => clientIp(c, deps.config.TRUST_PROXY),
    log,
    snapshots: deps.snapshots,
    webhooks: webhookSettings(deps.config),
  });
  return site;
}

/**
 * One delivery attempt: the URL checked again (url-check.ts), a POST of the signed body to the
 * address just checked, no redirect followed, a deadline on the whole exchange and at most
 * MAX_RESPONSE_BYTES of the answer read. Only a 2xx answer is a delivery; anything else, and
 * every failure to get an answer, is said in one line for the delivery log (never the secret).
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { ServiceError } from '../core/errors.js';
import { webhookHeaders } from './signature.js';
import { checkWebhookUrl, type Resolver, type UrlRules } from './url-check.js';

/** The most of a receiver's answer read: its status is what counts. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'research-intensity-webhooks/1';

export interface DeliveryOptions extends UrlRules {
  /** The deadline of one attempt, connection to end of answer (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  resolve?: Resolver;
}

export interface DeliveryResult {
  ok: boolean;
  /** The receiver's HTTP status, when it answered. */
  status: number | null;
  /** Why it is not a delivery, in one line; null when delivered. */
  error: string | null;
}

export interface WebhookMessage {
  /** The event id: the webhook-id header, the same at every attempt. */
  id: string;
  body: string;
}

export async function deliverWebhook(
  target: { url: string; secret: string },
  message: WebhookMessage,
  options: DeliveryOptions,
  nowMs = Date.now(),
): Promise<DeliveryResult> {
  // One deadline for the lookup and the exchange: the outbox's lease must outlast the attempt.
  const deadline = Date.now() + options.timeoutMs;
  let checked: Awaited<ReturnType<typeof checkWebhookUrl>>;
  let lookupTimer: NodeJS.Timeout | undefined;
  try {
    checked = await Promise.race([
      checkWebhookUrl(target.url, options, options.resolve),
      new Promise<never>((_, reject) => {
        lookupTimer = setTimeout(
          () =>
            reject(
              new ServiceError(
                'webhook_url_refused',
                `no answer within ${options.timeoutMs} ms (looking up the host)`,
              ),
            ),
          options.timeoutMs,
        );
      }),
    ]);
  } catch (error) {
    if (error instanceof ServiceError) return { ok: false, status: null, error: error.detail };
    throw error;
  } finally {
    clearTimeout(lookupTimer);
  }
  const { url, address } = checked;
  // Connect to the address checked, whatever a second lookup would say (DNS rebinding).
  const pinned: LookupFunction = (_host, opts, callback) => {
    if ((opts as { all?: boolean }).all)
      callback(null, [{ address: address.address, family: address.family }]);
    else callback(null, address.address, address.family);
  };
  const headers = {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    ...webhookHeaders(target.secret, message.id, Math.floor(nowMs / 1000), message.body),
  };
  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    const done = (result: DeliveryResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(result);
    };
    const request = (url.protocol === 'https:' ? https : http).request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        lookup: pinned,
        agent: false,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        const finish = () =>
          done(
            status >= 200 && status < 300
              ? { ok: true, status, error: null }
              : {
                  ok: false,
                  status,
                  error:
                    status >= 300 && status < 400
                      ? `redirect (HTTP ${status}) not followed: the subscription's URL must answer itself`
                      : `HTTP ${status}`,
                },
          );
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= MAX_RESPONSE_BYTES) finish();
        });
        response.on('end', finish);
        response.on('error', finish);
      },
    );
    const timer = setTimeout(
      () => done({ ok: false, status: null, error: `no answer within ${options.timeoutMs} ms` }),
      Math.max(0, deadline - Date.now()),
    );
    request.on('error', (error: Error) => done({ ok: false, status: null, error: oneLine(error) }));
    request.end(message.body);
  });
}

function oneLine(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return `${typeof code === 'string' ? `${code}: ` : ''}${error.message.split('\n')[0]}`.slice(0, 300);
}

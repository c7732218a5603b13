/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): each delivery carries
 * `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, which is
 * `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed by the subscription's secret. The secret
 * is `whsec_<base64 of 32 random bytes>`: the form the reference libraries (`standardwebhooks`)
 * take, so a receiver verifies with `new Webhook(secret).verify(body, headers)`.
 */
import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A new signing secret, shown once to the subscriber and kept in the state store to sign. */
export function generateWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** The signature header's value for one delivery: the same id, time and body give the same value. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of a delivery. */
export function webhookHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signWebhook(secret, id, timestampSeconds, body),
  };
}

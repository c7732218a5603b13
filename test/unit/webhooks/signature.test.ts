import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signWebhook, webhookHeaders } from '../../../src/webhooks/signature.js';

describe('the Standard Webhooks signer', () => {
  it("gives the specification's example signature (fixed secret, id, timestamp, body)", () => {
    // The example of the Standard Webhooks specification and its reference libraries' tests.
    const signature = signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs what the reference library verifies, and nothing else', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ type: 'subject.changed', data: { move: 5.1 } });
    const now = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders(secret, 'msg_abc', now, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'msg_other' })).toThrow();
  });

  it('refuses a secret not in the whsec_ form', () => {
    expect(() => signWebhook('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_1', 1, '{}')).toThrow(/whsec_/);
  });
});

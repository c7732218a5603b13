/**
 * A payer waiting on a settlement must get the service's own answer (the receipt, or 503
 * settlement_pending with the retry instructions), never the shipped proxy's 504: the longest a
 * paid request can take before its first byte, the facilitator's verify and the settle deadline
 * and the state store's deadline, stays under deploy/nginx.conf's proxy_read_timeout with room
 * for the work itself.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STATE_TIMEOUT_MS } from '../../../src/access/state-deadline.js';
import { loadConfig } from '../../../src/config/config.js';
import { FACILITATOR_TIMEOUT_MS } from '../../../src/payments/facilitator.js';

/** What the app's own work (a cold research question, a lab run) is left at the least. */
const WORK_MS = 10_000;

function nginxSeconds(directive: string): number {
  const conf = readFileSync(new URL('../../../deploy/nginx.conf', import.meta.url), 'utf8');
  const m = new RegExp(`^\\s*${directive}\\s+(\\d+)s;`, 'm').exec(conf);
  if (!m) throw new Error(`${directive} not found in deploy/nginx.conf`);
  return Number(m[1]);
}

describe('the settle deadline and the shipped proxy', () => {
  it('verify + settle deadline + state store + the work fit under proxy_read_timeout', () => {
    const config = loadConfig({});
    const paidRequestMs =
      FACILITATOR_TIMEOUT_MS + config.X402_SETTLE_TIMEOUT_SECONDS * 1000 + 2 * DEFAULT_STATE_TIMEOUT_MS;
    expect(paidRequestMs + WORK_MS).toBeLessThan(nginxSeconds('proxy_read_timeout') * 1000);
  });
});

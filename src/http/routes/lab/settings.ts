import { randomBytes } from 'node:crypto';
import type { StateStore } from '../../../access/state-store.js';
import type { QuoteSettings } from '../../../core/lab.js';

/** What the lab routes need besides the route basics. */
export interface LabDeps {
  state: StateStore;
  /** QUOTE_SECRET; when unset, a random secret kept in the state store, shared by every replica. */
  quoteSecret?: string;
  ttlSeconds: number;
  now?: () => Date;
}

/** The quote settings, with the secret read from the state store once and then kept. */
export function quoteSettings(deps: LabDeps): () => Promise<QuoteSettings> {
  let secret: Promise<string> | null = null;
  return async () => {
    secret ??= deps.quoteSecret
      ? Promise.resolve(deps.quoteSecret)
      : deps.state.secret('quote_signing', () => randomBytes(32).toString('base64url'));
    try {
      return { secret: await secret, ttlSeconds: deps.ttlSeconds, now: deps.now ?? (() => new Date()) };
    } catch (e) {
      secret = null; // a state store that was down is asked again next time
      throw e;
    }
  };
}

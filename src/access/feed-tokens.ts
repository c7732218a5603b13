/**
 * Feed tokens: `rif_<prefix>_<secret>`, the credential a feed reader puts in a feed's URL
 * (token=), since it sends no header. Made like API keys (api-keys.ts: a random prefix that names
 * it, 256 random bits, only the sha256 stored) but told apart by their form, so that neither is
 * ever taken for the other: a feed token opens feeds only, and an API key, which opens every call
 * of its plan, never goes in a URL (URLs end up in proxies' logs and readers' exports).
 */
import { randomBytes } from 'node:crypto';
import {
  generateKeyPrefix,
  hashApiKey,
  KEY_PREFIX_LENGTH,
  KEY_SECRET_BYTES,
  SECRET_LENGTH,
} from './api-keys.js';

const TOKEN_PATTERN = new RegExp(`^rif_([a-z0-9]{${KEY_PREFIX_LENGTH}})_([A-Za-z0-9_-]{${SECRET_LENGTH}})$`);

export interface GeneratedFeedToken {
  /** The whole token: shown once, never stored. */
  token: string;
  prefix: string;
  /** sha256(token), hex: the only form stored. */
  hash: string;
}

export function generateFeedToken(): GeneratedFeedToken {
  const prefix = generateKeyPrefix();
  const token = `rif_${prefix}_${randomBytes(KEY_SECRET_BYTES).toString('base64url')}`;
  return { token, prefix, hash: hashFeedToken(token) };
}

export const hashFeedToken = hashApiKey;

/** Form check, before any lookup: null unless `s` is shaped like a feed token. */
export function parseFeedToken(s: string): { prefix: string } | null {
  const m = TOKEN_PATTERN.exec(s);
  return m ? { prefix: m[1]! } : null;
}

/**
 * API keys: `ri_<prefix>_<secret>`.
 *
 * - prefix: 8 characters [a-z0-9], random, not secret. Shown in `ri keys list`, used to name a key
 *   when revoking it and in logs. It identifies; it does not authenticate.
 * - secret: 32 random bytes (256 bits) from the CSPRNG, base64url without padding (43 characters).
 *
 * Only sha256(key) (hex) is stored. A fast unsalted hash is the right choice here, unlike for
 * passwords: the key has 256 bits of entropy, so neither brute force nor precomputed tables can
 * invert the hash however fast it is, and slow hashes (bcrypt, scrypt, argon2) would only add
 * latency to every authenticated request. Because the hash is deterministic it can be indexed, so
 * a key is looked up by its hash, never by comparing secrets one by one.
 */
import { hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX_LENGTH = 8;
export const KEY_SECRET_BYTES = 32;
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** 32 bytes in base64url without padding are 43 characters. */
export const SECRET_LENGTH = Math.ceil((KEY_SECRET_BYTES * 8) / 6);
const KEY_PATTERN = new RegExp(`^ri_([a-z0-9]{${KEY_PREFIX_LENGTH}})_([A-Za-z0-9_-]{${SECRET_LENGTH}})$`);
export const PREFIX_PATTERN = new RegExp(`^[a-z0-9]{${KEY_PREFIX_LENGTH}}$`);

export interface GeneratedApiKey {
  /** The full key: shown once, never stored. */
  key: string;
  prefix: string;
  /** sha256(key), hex: the only form that is stored. */
  hash: string;
}

export function generateKeyPrefix(): string {
  let prefix = '';
  // randomInt is uniform (no modulo bias) and backed by the CSPRNG.
  for (let i = 0; i < KEY_PREFIX_LENGTH; i++) prefix += PREFIX_ALPHABET[randomInt(PREFIX_ALPHABET.length)];
  return prefix;
}

export function generateApiKey(): GeneratedApiKey {
  const prefix = generateKeyPrefix();
  const secret = randomBytes(KEY_SECRET_BYTES).toString('base64url');
  const key = `ri_${prefix}_${secret}`;
  return { key, prefix, hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  // One-shot (Node 20.12): a third of createHash()'s cost; every keyed call hashes its key.
  return hash('sha256', key, 'hex');
}

/** Format check, done before any lookup: null unless `s` is shaped like a key. */
export function parseApiKey(s: string): { prefix: string } | null {
  const m = KEY_PATTERN.exec(s);
  return m ? { prefix: m[1]! } : null;
}

/** Constant-time comparison of two hex sha256 digests (false, not an exception, on a length mismatch). */
export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
}

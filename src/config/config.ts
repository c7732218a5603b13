import { z } from 'zod';
import { LAB_QUOTE_TTL_SECONDS } from '../access/policy.js';
import { NETWORKS, type NetworkName } from '../payments/networks.js';

const NETWORK_NAMES = Object.keys(NETWORKS) as [NetworkName, ...NetworkName[]];

/** Service configuration from the environment, validated once at start. */
const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: z.string().url().optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  EDITION: z.enum(['full', 'enterprise']).default('full'),
  STATE_URL: z
    .string()
    .regex(/^(postgres(ql)?:\/\/|sqlite:)/, 'must be postgres://..., postgresql://... or sqlite:PATH')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be redis://... or rediss://...')
    .optional(),
  /** Requests per minute per API key and per client IP (without a key). */
  /** Per API key: unset, each plan's budget from the access table (PLAN_RATE_LIMITS). */
  RATE_LIMIT_PER_KEY: z.coerce.number().int().min(1).optional(),
  RATE_LIMIT_PER_IP: z.coerce.number().int().min(1).default(120),
  /**
   * Proxies in front of the service whose X-Forwarded-For entries are trusted, counted from the
   * right: false (none, the default), true (one), or a hop count.
   */
  TRUST_PROXY: z
    .string()
    .regex(/^(true|false|\d{1,2})$/, 'must be false, true or a hop count (0-99)')
    .default('false')
    .transform((v) => (v === 'true' ? 1 : v === 'false' ? 0 : Number(v))),
  /** Open connections held at once: from one client address, and in all. */
  MAX_CONNECTIONS_PER_CLIENT: z.coerce.number().int().min(1).default(256),
  MAX_CONNECTIONS: z.coerce.number().int().min(1).default(10_000),
  /** Signs lab quotes; unset: a random secret kept in the state store (shared by the replicas). */
  QUOTE_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  /** How long a lab quote binds its prices, in seconds. */
  QUOTE_TTL_SECONDS: z.coerce.number().int().min(1).max(86_400).default(LAB_QUOTE_TTL_SECONDS),
  /** Networks offered for per-call payment (x402), by name; each needs its payTo below. */
  X402_NETWORKS: z
    .string()
    .default('base,solana')
    .transform((v) =>
      v
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(NETWORK_NAMES)).min(1)),
  /** Where USDC paid on Base is sent; unset: Base is not offered. */
  X402_PAY_TO_EVM: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be an EVM address (0x and 40 hex digits)')
    .optional(),
  /** Where USDC paid on Solana is sent; unset: Solana is not offered. */
  X402_PAY_TO_SOLANA: z
    .string()
    .regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'must be a Solana address (base58)')
    .optional(),
  /** The x402 facilitator that verifies and settles payments (default: the x402 reference one). */
  X402_FACILITATOR_URL: z.string().url().optional(),
  /** An EVM JSON-RPC endpoint: read by `ri payments reconcile` and served by `ri facilitator`. */
  X402_EVM_RPC_URL: z.string().url().optional(),
  /** `ri facilitator` only: the key that submits settlements and pays their gas (development). */
  X402_FACILITATOR_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex key')
    .optional(),
  /** Who may read /metrics besides loopback: addresses or IPv4 CIDR ranges, comma-separated. */
  METRICS_ALLOW: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = z.infer<typeof EnvSchema> & { publicUrl: string };

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const parsed = EnvSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`bad configuration: ${problems}`);
  }
  const merged = { ...parsed.data, ...overrides };
  const host = merged.HOST === '0.0.0.0' || merged.HOST === '::' ? 'localhost' : merged.HOST;
  const publicUrl = (merged.PUBLIC_URL ?? `http://${host}:${merged.PORT}`).replace(/\/+$/, '');
  return { ...merged, publicUrl };
}

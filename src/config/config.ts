import { z } from 'zod';
import { EDITIONS, LAB_QUOTE_TTL_SECONDS } from '../access/policy.js';
import { DEFAULT_STATE_TIMEOUT_MS } from '../access/state-deadline.js';
import { invalidRanges } from '../util/ip-ranges.js';
import { DEFAULT_BUILD_MEMORY_MB } from './memory-budget.js';

/**
 * The networks a per-call payment can be offered on, as X402_NETWORKS names them; each one's terms
 * are `src/payments/networks.ts`, which must name exactly these (it does not compile otherwise).
 */
export const NETWORK_NAMES = ['base', 'base-sepolia', 'solana', 'solana-devnet'] as const;

/** How many published snapshots are kept by default (SNAPSHOTS_KEEP). */
export const DEFAULT_SNAPSHOTS_KEEP = 5;

/** The items of a comma-separated list, trimmed, empty ones dropped. */
const commaItems = (v: string) =>
  v
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** Service configuration from the environment, validated once at start. */
const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: z.string().url().optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  /** Published snapshots kept, and answerable with data_version= (always the current and the previous). */
  SNAPSHOTS_KEEP: z.coerce.number().int().min(2).max(100).default(DEFAULT_SNAPSHOTS_KEEP),
  /** The batch jobs' memory budget in MB (memory-budget.ts); read by ingest, build, update, pull. */
  BUILD_MEMORY_MB: z.coerce.number().int().min(1024).max(1_048_576).default(DEFAULT_BUILD_MEMORY_MB),
  EDITION: z.enum(EDITIONS).default('full'),
  STATE_URL: z
    .string()
    .regex(/^(postgres(ql)?:\/\/|sqlite:)/, 'must be postgres://..., postgresql://... or sqlite:PATH')
    .optional(),
  /** The deadline of every state-store call, in ms: past it the call answers 503 state_unavailable. */
  STATE_TIMEOUT_MS: z.coerce.number().int().min(50).max(60_000).default(DEFAULT_STATE_TIMEOUT_MS),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be redis://... or rediss://...')
    .optional(),
  /** Requests per minute per API key and per client IP (without a key). */
  /** Per API key: unset, each plan's budget from the access table (PLAN_RATE_LIMITS). */
  RATE_LIMIT_PER_KEY: z.coerce.number().int().min(1).optional(),
  RATE_LIMIT_PER_IP: z.coerce.number().int().min(1).default(120),
  /**
   * Proxies in front of the service whose X-Forwarded-For entries are believed: false (none, the
   * default), true (one), a hop count counted from the right, or the proxies' addresses and CIDR
   * ranges, comma-separated (IPv4 and IPv6; X-Forwarded-For is read only from them).
   */
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((v, ctx): number | string[] => {
      const t = v.trim();
      if (t === 'true') return 1;
      if (t === 'false') return 0;
      if (/^\d{1,2}$/.test(t)) return Number(t);
      const ranges = commaItems(t);
      const bad = invalidRanges(ranges);
      if (ranges.length === 0 || bad.length > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `must be false, true, a hop count (0-99) or proxy addresses and CIDR ranges, comma-separated${bad.length ? ` ('${bad[0]}' is neither)` : ''}`,
        });
        return z.NEVER;
      }
      return ranges;
    }),
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
    .transform(commaItems)
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
  /**
   * How long a payer waits for the facilitator to settle before being told the settlement is
   * pending (it goes on; the same request with the same payment then gets the answer, charged once).
   * Confirmation on Base takes seconds; the chain is read every second meanwhile, so a transfer
   * is answered as soon as it is mined whatever the facilitator does. With the verify timeout and
   * the work it must stay under a proxy's read timeout (deploy/nginx.conf: 60 s), or the payer gets
   * the proxy's 504 instead of the retry instructions.
   */
  X402_SETTLE_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(300).default(30),
  /**
   * An EVM JSON-RPC endpoint: where `ri serve` and `ri payments reconcile` look up settlements whose
   * outcome is unknown, and the chain `ri facilitator` settles on.
   */
  X402_EVM_RPC_URL: z.string().url().optional(),
  /**
   * A Solana JSON-RPC endpoint (of the cluster X402_NETWORKS names): where `ri serve` and `ri
   * payments reconcile` look up Solana settlements whose outcome is unknown.
   */
  X402_SOLANA_RPC_URL: z.string().url().optional(),
  /** `ri facilitator` only: the key that submits settlements and pays their gas (development). */
  X402_FACILITATOR_PRIVATE_KEY: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex key')
    .optional(),
  /** Who may read /metrics besides loopback: addresses or CIDR ranges (IPv4, IPv6), comma-separated. */
  METRICS_ALLOW: z.string().default('').transform(commaItems),
  /** Where sign-in mail goes (smtp:// or smtps://); unset: the sign-in link is printed in the server log. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be smtp://... or smtps://...')
    .optional(),
  /** The From of sign-in mail and plan requests. */
  MAIL_FROM: z.string().min(3).default('Research Intensity <no-reply@localhost>'),
  /**
   * The operator's address: where plan requests from /pricing are mailed (Reply-To the reader),
   * and the contact /pricing shows. Unset: with SMTP_URL, no request form; without, requests are
   * printed on the server's standard error, as sign-in mail is.
   */
  OPERATOR_EMAIL: z.string().email().optional(),
  /** Each plan's monthly price in USD, shown on /pricing; unset: "on request". */
  PLAN_PRICE_PERSONAL_USD: z.coerce.number().min(0).max(1_000_000).optional(),
  PLAN_PRICE_PROFESSIONAL_USD: z.coerce.number().min(0).max(1_000_000).optional(),
  PLAN_PRICE_ENTERPRISE_USD: z.coerce.number().min(0).max(1_000_000).optional(),
  /** The OpenAlex API that `ri pull` reads, and the key it sends as `api_key`. */
  OPENALEX_API_URL: z.string().url().default('https://api.openalex.org'),
  OPENALEX_API_KEY: z.string().min(1).optional(),
  /** Worker threads for research and lab answers; 0: in the event loop's thread. Default: cores less one (1-4). */
  WORKER_THREADS: z.coerce.number().int().min(0).max(64).optional(),
  /** Research and lab tasks waiting for a worker, at most; past it, 503 overloaded. */
  HEAVY_QUEUE: z.coerce.number().int().min(1).max(100_000).default(64),
  /** How long a research or lab task may wait and run, in ms; past it, 503 overloaded. */
  HEAVY_DEADLINE_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /**
   * Webhooks (src/webhooks): loopback addresses allowed as targets, and plain http to them
   * (development and tests; never in production: it opens the service's own host to them).
   */
  WEBHOOK_ALLOW_LOOPBACK: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** The deadline of one delivery attempt, in ms. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5_000),
  /** The wait before the first retry of a failed delivery, in ms; each next one waits twice as long. */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(30_000),
  /** How long after an event attempts go on before it is marked failed, in ms (a day). */
  WEBHOOK_RETRY_FOR_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(7 * 86_400_000)
    .default(86_400_000),
  /** How often each server looks in the outbox for deliveries due, in ms. */
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(2_000),
  /** How long delivered and failed events, and the delivery log, are kept, in days. */
  WEBHOOK_KEEP_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Config = z.infer<typeof EnvSchema> & { publicUrl: string };

/**
 * A bad configuration value: the `ri` commands end with its one line and exit 1 (src/cli/main.ts
 * knows it by its name, so as not to load this module for commands that read no configuration).
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

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

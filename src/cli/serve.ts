import { parseArgs } from 'node:util';
import pino from 'pino';
import { openStateStore, redactUrl } from '../access/open-state-store.js';
import { createRateLimiter } from '../access/rate-limiter.js';
import { loadConfig } from '../config/config.js';
import { dataPaths } from '../config/paths.js';
import { startServer } from '../http/server.js';
import { SERVER_LIMITS } from '../http/server-limits.js';
import { paymentsFromConfig } from '../payments/from-config.js';
import { SnapshotManager } from '../snapshot/snapshot.js';
import { CliError, portOption, printedHelp } from './cli-error.js';
import { logDestination } from './log-destination.js';
import { ensureDefaultSnapshot, rebuildWhenUnservable } from './pipeline.js';

const USAGE = `usage: ri serve [--port N] [--host H] [--data-dir DIR]

Serves the REST API at /v1, the MCP tool server at /mcp, the web pages and /metrics on the
current snapshot of DATA_DIR, and follows newly published snapshots without a restart. With no
snapshot yet, builds one from the bundled real sample. Configuration: environment variables
(docs/operations.md); --port, --host and --data-dir override PORT, HOST and DATA_DIR.`;

export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (printedHelp(values, USAGE)) return 0;
  // A bad option is a usage error (exit 2); a bad value in the environment is the configuration's
  // (ConfigError from loadConfig: one line, exit 1, main.ts).
  const { port, host } = values;
  if (port !== undefined) portOption(port);
  if (host?.trim() === '') throw new CliError('--host is empty');
  if (values['data-dir']?.trim() === '') throw new CliError('--data-dir is empty');
  const env = { ...process.env };
  if (port !== undefined) env.PORT = port;
  if (host !== undefined) env.HOST = host;
  if (values['data-dir'] !== undefined) env.DATA_DIR = values['data-dir'];
  const config = loadConfig(env);
  const logger = pino({ level: config.LOG_LEVEL }, logDestination());
  // Each start step fails with one line naming what could not be done, and nothing left running
  // (a watcher or a pool would keep the process alive without serving).
  const opened: { close(): unknown }[] = [];
  const fail = async (what: string, e: unknown): Promise<never> => {
    for (const o of opened.reverse()) await Promise.resolve(o.close()).catch(() => undefined);
    const message = e instanceof Error ? e.message.split('\n')[0] : String(e);
    throw new CliError(`cannot ${what}: ${message}`, 1);
  };
  await ensureDefaultSnapshot(config.DATA_DIR).catch((e) =>
    fail(`prepare the data in ${config.DATA_DIR}`, e),
  );
  const snapshots = new SnapshotManager(
    dataPaths(config.DATA_DIR).snapshots,
    (m) => logger.info(m),
    (m) => logger.warn(m),
  );
  const startChecked = rebuildWhenUnservable(config.DATA_DIR, snapshots, (m) => logger.warn(m));
  await snapshots.start();
  void snapshots.hashedBehind().then(startChecked);
  opened.push({ close: () => snapshots.stop() });
  const state = await openStateStore(config.STATE_URL, config.DATA_DIR, {
    timeoutMs: config.STATE_TIMEOUT_MS,
    log: (msg, fields) => logger.warn(fields, msg),
  }).catch((e) =>
    fail(
      `open the state store (${config.STATE_URL ? redactUrl(config.STATE_URL) : 'SQLite in DATA_DIR'})`,
      e,
    ),
  );
  opened.push(state);
  const payments = paymentsFromConfig(config, state, {
    log: (msg, fields) => logger.warn(fields ?? {}, msg),
  });
  opened.push(payments);
  // The networks the start line states are those the facilitator has confirmed (Solana needs it).
  // (A facilitator that does not answer within a few seconds is asked again in the background.)
  if (payments.enabled) {
    await within(3_000, () => payments.ready()).catch(() => {});
    payments.startBackground();
  }
  const rateLimiter = createRateLimiter(config.REDIS_URL, { log: (m) => logger.warn(m) });
  opened.push({ close: () => rateLimiter.close?.() });
  const server = await startServer(
    config,
    snapshots,
    state,
    (msg, fields) => logger.error(fields ?? {}, msg),
    { logger, rateLimiter, payments },
  ).catch((e) => fail(`listen on ${config.HOST}:${config.PORT}`, e));
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      // A second signal while draining ends the process at once (an operator's "now").
      if (stopping) {
        logger.warn(`${signal} again: exiting without waiting`);
        process.exit(1);
      }
      stopping = true;
      logger.info(`${signal}: finishing in-flight requests`);
      // The last word: whatever hangs in the steps below, the process ends (the drain's limit,
      // each client's close step, and a margin).
      setTimeout(
        () => {
          logger.error(`${signal}: shutdown did not finish in time; exiting`);
          process.exit(1);
        },
        SERVER_LIMITS.drainMs + 5 * CLOSE_STEP_MS,
      ).unref();
      await server.close();
      snapshots.stop();
      // Each client closes within a few seconds or is left behind, named in the log: a stuck
      // connection to PostgreSQL or Redis must not keep a stopped server alive.
      for (const [name, close] of [
        ['state store', () => state.close()],
        ['rate limiter', () => rateLimiter.close?.()],
        ['payments', () => payments.close()],
      ] as const)
        await within(CLOSE_STEP_MS, close).catch(() =>
          logger.warn(`${signal}: ${name} did not close in time`),
        );
      resolve();
      // Anything still holding the event loop open (a socket, a timer of a client library) does
      // not keep the process: it has finished its work.
      setTimeout(() => {
        logger.warn(`${signal}: handles still open after shutdown; exiting`);
        process.exit(0);
      }, CLOSE_STEP_MS).unref();
    };
    process.on('SIGTERM', () => void stop('SIGTERM'));
    process.on('SIGINT', () => void stop('SIGINT'));
    // Said once the signals are ours: a supervisor that stops the server as soon as it reads this
    // line gets the graceful shutdown, not the default kill.
    if (payments.enabled) {
      const waiting = payments.waiting.map((w) => `; ${w.network} waits for ${w.why}`).join('');
      const now = payments.offeredNow.join(', ') || 'no network yet';
      process.stdout.write(`ri: per-call payments (x402) on ${now}${waiting}\n`);
      if (!config.X402_EVM_RPC_URL && payments.offered.some((n) => n.startsWith('base')))
        logger.warn(
          'X402_EVM_RPC_URL is not set: a settlement whose outcome is unknown (a facilitator timeout) is resolved only by its payer retrying or by `ri payments reconcile` with it set',
        );
      if (!config.X402_SOLANA_RPC_URL && payments.offered.some((n) => n.startsWith('solana')))
        logger.warn(
          'X402_SOLANA_RPC_URL is not set: a Solana settlement the facilitator does not confirm stays pending, its payer told the outcome is unknown, until `ri payments reconcile` runs with it set',
        );
    }
    process.stdout.write(
      `ri: serving ${snapshots.version ?? 'no snapshot'} at ${server.url}/v1 (try ${server.url}/v1/elements)\n`,
    );
  });
  return 0;
}

const CLOSE_STEP_MS = 3_000;

/** Runs `step`, rejecting when it has not finished within `ms`. */
function within(ms: number, step: () => unknown): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    Promise.resolve().then(step),
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import type { StateStore } from '../access/state-store.js';
import { UsageCounter } from '../access/usage-counter.js';
import type { Config } from '../config/config.js';
import { inThread } from '../core/worker-pool.js';
import { writeMissingExports } from '../exports/write-exports.js';
import type { SnapshotManager } from '../snapshot/snapshot.js';
import { WebhookDispatcher } from '../webhooks/dispatcher.js';
import { webhookSettings } from '../webhooks/subscriptions.js';
import { workerPool } from '../worker-pool/pool.js';
import { createApp } from './app.js';
import type { AppDeps } from './context.js';
import { fastPath } from './fast-path/fast-path.js';
import { boundServer, refusedWithoutHost, unreadableRequest } from './server-limits.js';

/**
 * The node request listener of the app: GET /v1/... first through the fast path (a cached answer is
 * written without Hono's objects), everything else through @hono/node-server. A request target
 * the adapter cannot make a URL of (a backslash, no leading slash, a bad Host) is answered as
 * problem+json like Node's own refusals, not as an empty 400; so is an HTTP/1.1 request without a
 * Host (which the server lets through to it). The tests serve apps through it too.
 */
export function serviceListener(
  app: ReturnType<typeof createApp>,
  options: { hostname?: string; publicUrl: string },
): RequestListener {
  const hono = getRequestListener(app.fetch, {
    ...(options.hostname !== undefined ? { hostname: options.hostname } : {}),
    errorHandler: () => unreadableRequest(options.publicUrl),
  });
  const served = fastPath(app.fastPath, hono);
  return (incoming, outgoing) => {
    if (!refusedWithoutHost(incoming, outgoing, options.publicUrl)) served(incoming, outgoing);
  };
}

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the app on a port, bounded (server-limits.ts); close() stops accepting and lets the
 * requests already accepted finish, for at most the drain deadline.
 */
export function startServer(
  config: Config,
  snapshots: SnapshotManager,
  state: StateStore,
  log: NonNullable<AppDeps['log']>,
  extra: Pick<AppDeps, 'logger' | 'rateLimiter' | 'metrics' | 'payments'> = {},
): Promise<RunningServer> {
  const usage = new UsageCounter(state);
  const pool =
    config.WORKER_THREADS === 0
      ? inThread
      : workerPool({
          ...(config.WORKER_THREADS !== undefined ? { threads: config.WORKER_THREADS } : {}),
          maxQueue: config.HEAVY_QUEUE,
          deadlineMs: config.HEAVY_DEADLINE_MS,
          log,
        });
  // Each published snapshot is read ahead by the workers, the one served now first.
  snapshots.onSwitch((s) => void pool.warm(s));
  // Exports are written at publication; a kept version without them (a build that wrote none, or
  // whose writing failed) gets them here, at the start and at each switch, never per request.
  void writeMissingExports(snapshots.dir, log);
  snapshots.onSwitch(() => void writeMissingExports(snapshots.dir, log));
  const served = snapshots.acquire();
  if (served) void pool.warm(served).finally(() => served.release());
  const app = createApp({ config, snapshots, state, log, usage, workerPool: pool, ...extra });
  // Every replica sends webhooks: the outbox in the state store gives each event to one of them.
  const webhooks = new WebhookDispatcher({
    state,
    snapshots,
    settings: webhookSettings(config),
    publicUrl: config.publicUrl,
    edition: config.EDITION,
    log,
  });
  webhooks.start();
  return new Promise((resolve, reject) => {
    const { server, drain } = boundServer(
      serviceListener(app, { hostname: config.HOST, publicUrl: config.publicUrl }),
      {
        perClient: config.MAX_CONNECTIONS_PER_CLIENT,
        total: config.MAX_CONNECTIONS,
        publicUrl: config.publicUrl,
        // A request without a Host is refused by serviceListener, as problem+json.
        serverOptions: { maxHeaderSize: 16 * 1024, requireHostHeader: false },
      },
    );
    server.listen(config.PORT, config.HOST, () => {
      const info = server.address() as AddressInfo;
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${host === '0.0.0.0' || host === '[::]' ? 'localhost' : host}:${info.port}`,
        // The calls counted since the last flush are written after the last request is done.
        close: () =>
          Promise.all([drain(), webhooks.stop()])
            .then(() =>
              usage.close().catch((e: Error) => log('usage counts not written', { err: e.message })),
            )
            .then(() => pool.close()),
      });
    });
    // A port in use or not ours: fail the start (rather than never listening).
    server.once('error', reject);
  });
}

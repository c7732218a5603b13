import type { Server } from 'node:http';
import { type ServerType, serve } from '@hono/node-server';
import type { StateStore } from '../access/state-store.js';
import { UsageCounter } from '../access/usage-counter.js';
import type { Config } from '../config/config.js';
import type { SnapshotManager } from '../snapshot/snapshot.js';
import { createApp } from './app.js';
import type { AppDeps } from './context.js';
import { boundServer } from './server-limits.js';

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
  const app = createApp({ config, snapshots, state, log, usage, ...extra });
  return new Promise((resolve, reject) => {
    let drain: () => Promise<void> = async () => {};
    const server: ServerType = serve(
      {
        fetch: app.fetch,
        port: config.PORT,
        hostname: config.HOST,
        serverOptions: { maxHeaderSize: 16 * 1024 },
      },
      (info) => {
        const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
        resolve({
          url: `http://${host === '0.0.0.0' || host === '[::]' ? 'localhost' : host}:${info.port}`,
          // The calls counted since the last flush are written after the last request is done.
          close: () =>
            drain().then(() =>
              usage.close().catch((e: Error) => log('usage counts not written', { err: e.message })),
            ),
        });
      },
    );
    drain = boundServer(server as Server, {
      perClient: config.MAX_CONNECTIONS_PER_CLIENT,
      total: config.MAX_CONNECTIONS,
      publicUrl: config.publicUrl,
    });
    // A port in use or not ours: fail the start (rather than never listening).
    server.once('error', reject);
  });
}

import { type ServerType, serve } from '@hono/node-server';
import type { StateStore } from '../access/state-store.js';
import type { Config } from '../config/config.js';
import type { SnapshotManager } from '../snapshot/snapshot.js';
import { createApp } from './app.js';
import type { AppDeps } from './context.js';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/** Serves the app on a port; close() stops accepting and lets in-flight requests finish. */
export function startServer(
  config: Config,
  snapshots: SnapshotManager,
  state: StateStore,
  log: NonNullable<AppDeps['log']>,
  extra: Pick<AppDeps, 'logger' | 'rateLimiter' | 'metrics' | 'payments'> = {},
): Promise<RunningServer> {
  const app = createApp({ config, snapshots, state, log, ...extra });
  return new Promise((resolve, reject) => {
    const server: ServerType = serve(
      { fetch: app.fetch, port: config.PORT, hostname: config.HOST },
      (info) => {
        const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
        resolve({
          url: `http://${host === '0.0.0.0' || host === '[::]' ? 'localhost' : host}:${info.port}`,
          close: () => new Promise<void>((done) => server.close(() => done())),
        });
      },
    );
    // A port in use or not ours: fail the start (rather than never listening).
    server.once('error', reject);
  });
}

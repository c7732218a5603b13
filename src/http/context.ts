import type { Config } from '../config/config.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';

/** What every request can reach through the Hono context. */
export type AppEnv = {
  Variables: {
    requestId: string;
    snapshot: Snapshot;
  };
};

export interface AppDeps {
  config: Config;
  snapshots: SnapshotManager;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

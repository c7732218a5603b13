import { join } from 'node:path';
import type { Plan } from '../../src/access/plans.js';
import { openStateStore, type StateStore } from '../../src/access/state-store.js';
import { type Config, loadConfig } from '../../src/config/config.js';
import { createApp } from '../../src/http/app.js';
import { SnapshotManager } from '../../src/snapshot/snapshot.js';
import { sampleDataDir } from './sample.js';
import { tempDir } from './works.js';

/** An app over a snapshot of the bundled sample, with an SQLite state store and a key per plan. */
export async function sampleApp(overrides: Partial<Config> = {}, options: { now?: () => Date } = {}) {
  const sample = await sampleDataDir();
  const snapshots = new SnapshotManager(sample.snapshots);
  await snapshots.start();
  const state = await openStateStore(undefined, tempDir('ri-state-'));
  await state.migrate();
  const config = loadConfig({}, { PUBLIC_URL: 'https://ri.example', ...overrides });
  const app = createApp({ config, snapshots, state, ...options });
  const keys: Partial<Record<Plan, string>> = {};
  for (const plan of ['free', 'personal', 'professional', 'enterprise'] as const) {
    const account = await state.createAccount({ email: `${plan}@example.org`, plan });
    keys[plan] = (await state.createKey(account.id)).key;
  }
  return {
    app,
    state,
    snapshots,
    version: sample.version,
    keys: keys as Record<Plan, string>,
    dataDir: sample.dataDir,
    close: async () => {
      snapshots.stop();
      await state.close();
    },
  };
}

export const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

export async function emptyState(): Promise<StateStore> {
  const state = await openStateStore(undefined, join(tempDir('ri-state-'), 'x'));
  await state.migrate();
  return state;
}

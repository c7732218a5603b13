import { join } from 'node:path';
import type { FacilitatorClient } from '@x402/core/server';
import { openStateStore } from '../../src/access/open-state-store.js';
import type { PaymentLedger } from '../../src/access/payment-ledger.js';
import type { Plan } from '../../src/access/plans.js';
import type { StateStore } from '../../src/access/state-store.js';
import { type Config, loadConfig } from '../../src/config/config.js';
import type { WorkerPool } from '../../src/core/worker-pool.js';
import { createApp } from '../../src/http/app.js';
import { paymentsFromConfig } from '../../src/payments/from-config.js';
import { SnapshotManager } from '../../src/snapshot/snapshot.js';
import { checkedRequests } from './contract.js';
import { sampleDataDir } from './sample.js';
import { tempDir } from './works.js';

/** An app over a snapshot of the bundled sample, with an SQLite state store and a key per plan. */
export async function sampleApp(
  overrides: Partial<Config> = {},
  options: {
    now?: () => Date;
    /** The payment service's own clock (its settle deadline), apart from the app's `now`. */
    paymentsNow?: () => number;
    facilitator?: FacilitatorClient;
    /** Wraps the ledger the payments write to (crash-window tests). */
    ledger?: (state: StateStore) => PaymentLedger;
    /** Where research and lab answers are computed (a worker pool); in the test's thread when absent. */
    workerPool?: WorkerPool;
  } = {},
) {
  const sample = await sampleDataDir();
  const snapshots = new SnapshotManager(sample.snapshots);
  await snapshots.start();
  const stateDir = tempDir('ri-state-');
  const state = await openStateStore(undefined, stateDir);
  await state.migrate();
  const config = loadConfig({}, { PUBLIC_URL: 'https://ri.example', ...overrides });
  const { facilitator, ledger, paymentsNow, ...rest } = options;
  const payments = paymentsFromConfig(config, ledger ? ledger(state) : state, {
    ...(facilitator ? { facilitator } : {}),
    ...(paymentsNow ? { now: paymentsNow } : {}),
  });
  // Every 200 JSON answer a test asks of this app is checked against its OpenAPI response schema.
  const app = checkedRequests(createApp({ config, snapshots, state, payments, ...rest }));
  const keys: Partial<Record<Plan, string>> = {};
  for (const plan of ['free', 'personal', 'professional', 'enterprise'] as const) {
    const account = await state.createAccount({ email: `${plan}@example.org`, plan });
    keys[plan] = (await state.createKey(account.id)).key;
  }
  return {
    app,
    state,
    payments,
    snapshots,
    version: sample.version,
    keys: keys as Record<Plan, string>,
    dataDir: sample.dataDir,
    statePath: join(stateDir, 'state.sqlite'),
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

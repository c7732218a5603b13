import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Three projects by folder, all run by `npm test`:
 * - test/unit: pure logic, no services, processes, sockets, threads or files written (`npm run test:unit`, seconds);
 * - test/e2e: whole processes and real peers end to end (browser, nginx, replicas, the README's commands);
 * - test/integration: the rest (real HTTP in process, SQLite/DuckDB files, worker threads, PostgreSQL,
 *   Redis, a local chain).
 * test/helpers and test/fixtures serve all three.
 */
// biome-ignore lint/style/noDefaultExport: vitest reads the default export
export default defineConfig({
  test: {
    // Whole processes, builds and servers: the timeout is a hang guard, not a speed check. On a
    // slow 2-core machine tests with no timeout of their own took up to 26 s of vitest's 30
    // (recovery.test.ts 16-26 s, versions-keep, pull-cli, state-backup 16-18 s). Unit tests: 30 s.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One temporary folder for the run, removed at its end (KEEP_TEST_TMP=1 keeps it): test/temp-root.ts.
    globalSetup: ['test/temp-root.ts'],
    // At least two files at once: most of them wait on processes, sockets and services, so a second
    // worker on a 2-core machine takes the suite from 11-12 minutes to 8-9 (vitest's default there is one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'src/**/*.test.ts'],
          // Pure logic (no mocks, globals or environment changed): the files share their workers'
          // imports instead of each loading the modules anew (half the tier's time went to imports).
          isolate: false,
          testTimeout: 30_000,
        },
      },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'] } },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'] } },
    ],
  },
});

import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Three projects, all run by `npm test`:
 * - unit: pure logic, no services, processes, sockets, threads or files written (`npm run test:unit`, seconds);
 * - e2e: whole processes and real peers end to end (browser, nginx, replicas, the README's commands);
 * - integration: the rest (real HTTP in process, SQLite/DuckDB files, worker threads, PostgreSQL, Redis, a
 *   local chain).
 */
const UNIT = [
  'src/**/*.test.ts',
  'test/core/history-periods.test.ts',
  'test/core/most-cited.test.ts',
  'test/http/trust-proxy-units.test.ts',
  'test/access/usage-counter.test.ts',
  'test/http/client-gone.test.ts',
  'test/lab/**/*.test.ts',
  'test/ingest/paper-record.test.ts',
  'test/scoring/formulas.test.ts',
  'test/scoring/ranking-comparator.test.ts',
  'test/tagging/elements.test.ts',
  'test/tagging/tagger.test.ts',
  'test/house/**/*.test.ts',
  'test/web/charts-numbers.test.ts',
];
const E2E = [
  'test/ops/**/*.test.ts',
  'test/web/browser.test.ts',
  'test/http/e2e.test.ts',
  'test/http/replicas.test.ts',
  'test/mcp/inspector.test.ts',
  'test/mcp/sdk-v2-client.test.ts',
  'test/payments/demo.test.ts',
  'test/cli/readme.test.ts',
];

// biome-ignore lint/style/noDefaultExport: vitest reads the default export
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // At least two files at once: most of them wait on processes, sockets and services, so a second
    // worker on a 2-core machine takes the suite from 11-12 minutes to 8-9 (vitest's default there is one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      { extends: true, test: { name: 'e2e', include: E2E } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...UNIT, ...E2E, '**/node_modules/**'],
        },
      },
    ],
  },
});

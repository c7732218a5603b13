import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { ri } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';

/** SNAPSHOTS_KEEP through the real CLI: `ri build` prunes to it (needs `npm run build` first). */
let dataDir: string;
let snapshots: string;
let first: string;

const files = () =>
  readdirSync(snapshots)
    .filter((f) => f.endsWith('.sqlite'))
    .map((f) => f.slice(0, 16))
    .sort();

/** Ingests a few new works, then `ri build` with this environment: the new data_version. */
async function buildMore(startId: number, env: Record<string, string>) {
  const extra = Array.from({ length: 5 }, (_, i) => work(startId + i, { title: `Cobalt oxide film ${i}` }));
  await ingest(
    join(dataDir, 'corpus.duckdb'),
    expandWorksPaths([writeWorks(join(tempDir(), 'w.jsonl'), extra)]),
  );
  const r = ri(['build', '--data-dir', dataDir], env);
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
}

beforeAll(async () => {
  ({ dataDir, snapshots, version: first } = await sampleDataDir());
}, 60_000);

describe('SNAPSHOTS_KEEP', () => {
  it('keeps that many published snapshots (5 by default) and refuses fewer than 2', async () => {
    const second = await buildMore(991_000_001, { SNAPSHOTS_KEEP: '2' });
    expect(files()).toEqual([first, second].sort());
    const third = await buildMore(991_000_101, { SNAPSHOTS_KEEP: '2' });
    expect(files()).toEqual([second, third].sort());
    const fourth = await buildMore(991_000_201, {});
    expect(files()).toEqual([second, third, fourth].sort());

    const refused = ri(['build', '--data-dir', dataDir], { SNAPSHOTS_KEEP: '1' });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/SNAPSHOTS_KEEP/);
    expect(files()).toEqual([second, third, fourth].sort());
  }, 120_000);
});

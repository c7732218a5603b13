import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { readPointer } from '../../../src/snapshot/folder.js';
import { readPublications } from '../../../src/snapshot/publication-log.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { buildSnapshot } from '../../../src/snapshot-build/build-snapshot.js';
import { rollback } from '../../../src/snapshot-build/publish.js';
import { emptyState } from '../../helpers/app.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';

let dataDir: string;
let snapshots: string;
let first: string;
const corpus = () => join(dataDir, 'corpus.duckdb');

/** Adds iron papers and publishes a new snapshot: a different data_version with a different Fe score. */
async function publishAnother(n: number, startId: number, keep?: number) {
  const extra = Array.from({ length: n }, (_, i) =>
    work(startId + i, {
      title: `Iron oxide study ${i}`,
      publication_date: '2025-12-01',
      publication_year: 2025,
    }),
  );
  await ingest(corpus(), expandWorksPaths([writeWorks(join(tempDir(), `extra-${startId}.jsonl`), extra)]));
  return buildSnapshot(corpus(), snapshots, keep === undefined ? {} : { keep });
}

beforeAll(async () => {
  ({ dataDir, snapshots, version: first } = await sampleDataDir());
});

describe('publishing', () => {
  it('keeps the last `keep` published snapshots (at least the current and the previous), and rolls back', async () => {
    const second = await publishAnother(20, 900_000_001, 3);
    expect(second.changed).toBe(true);
    expect(second.previous).toBe(first);
    expect(readPublications(snapshots).map((p) => p.data_version)).toEqual([second.version, first]);
    expect(readdirSync(snapshots).filter((f) => f.endsWith('.sqlite')).length).toBe(2);
    const third = await publishAnother(20, 900_000_101, 2);
    expect(readPointer(snapshots, 'CURRENT')).toBe(third.version);
    expect(readPointer(snapshots, 'PREVIOUS')).toBe(second.version);
    const files = readdirSync(snapshots)
      .filter((f) => f.endsWith('.sqlite'))
      .sort();
    expect(files).toEqual([`${second.version}.sqlite`, `${third.version}.sqlite`].sort());
    expect(readdirSync(snapshots).filter((f) => f.startsWith('.'))).toEqual([]);
    // The log names what is kept, newest first, with what each holds.
    const log = readPublications(snapshots);
    expect(log.map((p) => p.data_version)).toEqual([third.version, second.version]);
    expect(log[0]!.works).toBe(log[1]!.works! + 20);

    expect(rollback(snapshots)).toEqual({ version: second.version, previous: third.version });
    expect(readFileSync(join(snapshots, 'CURRENT'), 'utf8').trim()).toBe(second.version);
    expect(readPointer(snapshots, 'PREVIOUS')).toBe(third.version);
  });
});

describe('a running server switches snapshots without a restart', () => {
  let server: RunningServer;
  let manager: SnapshotManager;

  afterAll(async () => {
    await server?.close();
    manager?.stop();
  });

  it('serves every request from one version while a new one is published under load', async () => {
    manager = new SnapshotManager(snapshots);
    await manager.start(50);
    // A load test from one address: lift the per-IP limit.
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', RATE_LIMIT_PER_IP: '1000000' });
    server = await startServer(config, manager, await emptyState(), () => {});
    const before = manager.version!;

    // Fe's score in each version, read through the API itself.
    const feOf = new Map<string, number>();
    const errors: string[] = [];
    let stop = false;
    let requests = 0;
    const loop = async () => {
      while (!stop) {
        const res = await fetch(`${server.url}/v1/elements`);
        requests++;
        if (res.status !== 200) {
          errors.push(`status ${res.status}`);
          continue;
        }
        const body = (await res.json()) as {
          data_version: string;
          elements: { symbol: string; ri: number }[];
        };
        const fe = body.elements.find((e) => e.symbol === 'Fe')!.ri;
        const known = feOf.get(body.data_version);
        if (known === undefined) feOf.set(body.data_version, fe);
        else if (known !== fe) errors.push(`mixed answer for ${body.data_version}: Fe ${fe} vs ${known}`);
      }
    };
    const loops = Array.from({ length: 8 }, loop);
    await new Promise((r) => setTimeout(r, 200));
    const next = await publishAnother(50, 900_001_001);
    const deadline = Date.now() + 10_000;
    while (manager.version !== next.version && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await Promise.all(loops);

    expect(errors).toEqual([]);
    expect(manager.version).toBe(next.version);
    expect([...feOf.keys()].sort()).toEqual([before, next.version].sort());
    expect(feOf.get(next.version)).toBeGreaterThan(feOf.get(before)!);
    expect(requests).toBeGreaterThan(50);
  });

  it('lets a request in flight finish on its snapshot after a switch, then closes it', async () => {
    const held = manager.acquire()!;
    const heldVersion = held.version;
    const next = await publishAnother(5, 900_002_001);
    await manager.refresh(); // the folder watcher may already have switched
    expect(manager.version).toBe(next.version);
    // The old snapshot still answers the request that holds it.
    expect(held.db.open).toBe(true);
    expect(held.version).toBe(heldVersion);
    expect(held.db.prepare("SELECT count(*) FROM subjects WHERE type = 'element'").pluck().get()).toBe(118);
    held.release();
    expect(held.db.open).toBe(false);
  });
});

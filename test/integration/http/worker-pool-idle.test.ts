import { copyFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { IDLE_CLOSE_MS, task } from '../../../src/worker-pool/pool-worker.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

// The worker thread's task, run in this thread: which snapshot files it holds open is what the
// process holds (/proc/self/fd), and Date is the only clock it reads.
let older: string;
let newer: string;
let version: string;

beforeAll(async () => {
  const sample = await sampleDataDir();
  version = sample.version;
  const dir = tempDir('ri-worker-idle-');
  older = join(dir, 'older.sqlite');
  newer = join(dir, 'newer.sqlite');
  copyFileSync(join(sample.snapshots, `${version}.sqlite`), older);
  copyFileSync(older, newer);
  vi.useFakeTimers({ toFake: ['Date'] });
}, 120_000);

afterAll(() => {
  vi.useRealTimers();
});

const isOpen = (path: string) =>
  readdirSync('/proc/self/fd').some((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  });

const research = (path: string) =>
  task({
    path,
    version,
    task: {
      kind: 'research',
      request: { q: 'oxygen evolution', pageSize: 5, lenses: ['now'], page: 1 },
      viewer: { hriAvailable: true, publicUrl: 'https://ri.example' },
    },
  });

describe('a research worker lets go of the snapshot it no longer serves', () => {
  it('keeps the previous snapshot while it is still asked about, closes it once unused for IDLE_CLOSE_MS', () => {
    vi.setSystemTime(1_000_000);
    expect(research(older)).not.toHaveProperty('serviceError');
    vi.setSystemTime(1_000_000 + IDLE_CLOSE_MS / 2);
    research(newer);
    // Recently used: both stay open (a read pinned to the older version may still come).
    expect(isOpen(older)).toBe(true);
    expect(isOpen(newer)).toBe(true);
    vi.setSystemTime(1_000_000 + IDLE_CLOSE_MS + 1);
    research(newer);
    expect(isOpen(older)).toBe(false);
    expect(isOpen(newer)).toBe(true);
    // Asked about again, it is opened again and answers the same.
    expect(research(older)).toEqual(research(newer));
  });
});

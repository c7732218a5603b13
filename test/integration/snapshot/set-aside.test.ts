import {
  closeSync,
  copyFileSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { contentHash } from '../../../src/snapshot/file-hash.js';
import { fileStamp, snapshotFile } from '../../../src/snapshot/folder.js';
import { type Snapshot, SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { emptyState } from '../../helpers/app.js';
import { until } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';

/**
 * A snapshot file damaged while served is set aside at once, before its bytes are hashed: no
 * answer from it is sent any more (requests that began on it get 503 data_unavailable), and every
 * answer kept from it (the response cache, the MCP answer cache) is dropped; then it is
 * quarantined and the previous version served. Through the real listener, on the bundled sample.
 */

/** The same whole second for both files, so a test can put a file's stamp back exactly. */
const MTIME = 1_700_000_000;

interface Served {
  dir: string;
  /** The current version (the sample), and an older one published before it (PREVIOUS). */
  newer: string;
  older: string;
  snapshots: SnapshotManager;
  state: StateStore;
  server: RunningServer;
  key: string;
  /** When each version was set aside or forgotten (performance.now()), as the manager tells its caches. */
  forgotten: Map<string, number>;
  /** What the manager logged (for the failures' messages). */
  logged: string[];
}

let running: Served | null = null;
afterEach(async () => {
  await running?.server.close();
  running?.snapshots.stop();
  await running?.state.close();
  running = null;
});

/** The sample's snapshot (CURRENT) and a copy of it told apart by one meta row, under its own hash (PREVIOUS). */
async function serveTwoVersions(): Promise<Served> {
  const sample = await sampleDataDir();
  const dir = sample.snapshots;
  const newer = sample.version;
  const copy = join(dir, '.older.sqlite');
  copyFileSync(snapshotFile(dir, newer), copy);
  const db = new Database(copy);
  db.prepare("INSERT INTO meta (key, value) VALUES ('test_older_copy', '1')").run();
  db.close();
  const older = await contentHash(copy);
  renameSync(copy, snapshotFile(dir, older));
  writeFileSync(join(dir, '.PREVIOUS.test'), `${older}\n`);
  renameSync(join(dir, '.PREVIOUS.test'), join(dir, 'PREVIOUS'));
  for (const version of [newer, older]) utimesSync(snapshotFile(dir, version), MTIME, MTIME);

  const logged: string[] = [];
  const snapshots = new SnapshotManager(dir, (m) => logged.push(m));
  const forgotten = new Map<string, number>();
  snapshots.onForget((version) => {
    if (!forgotten.has(version)) forgotten.set(version, performance.now());
  });
  await snapshots.start();
  const state = await emptyState();
  const account = await state.createAccount({ email: 'free@example.org', plan: 'free' });
  const { key } = await state.createKey(account.id);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    WORKER_THREADS: '0',
    RATE_LIMIT_PER_IP: '100000',
  });
  const server = await startServer(config, snapshots, state, () => {});
  running = { dir, newer, older, snapshots, state, server, key, forgotten, logged };
  return running;
}

/** Overwrites 64 KiB in the middle of a file (and its first page, when asked), as a stray write would. */
function damage(path: string, options: { firstPage?: boolean; keepStamp?: boolean } = {}): void {
  const size = statSync(path).size;
  const fd = openSync(path, 'r+');
  try {
    if (options.firstPage) writeSync(fd, Buffer.alloc(4096, 0), 0, 4096, 0);
    writeSync(fd, Buffer.alloc(64 * 1024, 0x5a), 0, 64 * 1024, Math.floor(size / 2 / 4096) * 4096);
  } finally {
    closeSync(fd);
  }
  // Its size, mtime and inode as they were: only SQLite can tell.
  if (options.keepStamp) utimesSync(path, MTIME, MTIME);
}

interface Got {
  status: number;
  code?: string;
  dataVersion?: string;
  hit: boolean;
}

async function get(s: Served, path: string, headers: Record<string, string> = {}): Promise<Got> {
  const res = await fetch(`${s.server.url}${path}`, { headers });
  const body = (await res.json()) as { code?: string; data_version?: string };
  return {
    status: res.status,
    ...(body.code ? { code: body.code } : {}),
    ...(body.data_version ? { dataVersion: body.data_version } : {}),
    hit: /cache;desc=hit/.test(res.headers.get('server-timing') ?? ''),
  };
}

/** A tools/call over HTTP: its result (structuredContent) or its error's problem. */
async function tool(s: Served, name: string, args: Record<string, unknown>) {
  const res = await fetch(`${s.server.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }),
  });
  const message = (await res.json()) as {
    result: { isError?: boolean; structuredContent?: { data_version?: string }; content: { text: string }[] };
  };
  const result = message.result;
  return result.isError
    ? { error: (JSON.parse(result.content[0]!.text) as { code: string }).code }
    : { dataVersion: result.structuredContent?.data_version };
}

const quarantined = (dir: string) => {
  try {
    return readdirSync(join(dir, 'quarantine'));
  } catch {
    return [];
  }
};

describe('a snapshot damaged while served', () => {
  it('is set aside at once: no answer from it after that, and its cached answers are gone', async () => {
    const s = await serveTwoVersions();
    const bearer = { authorization: `Bearer ${s.key}` };
    // Cached answers of the served version: anonymous and keyed.
    for (const headers of [{}, bearer]) {
      await get(s, '/v1/elements/Fe', headers);
      expect(await get(s, '/v1/elements/Fe', headers)).toEqual({
        status: 200,
        dataVersion: s.newer,
        hit: true,
      });
    }
    const served = s.snapshots.acquire() as Snapshot;
    served.release();
    expect(served.memo.size).toBeGreaterThan(0);

    // A keyed request that holds the served snapshot while its key (of the same plan, never seen
    // before: looked up in the store) is looked up, until told to go on.
    const account = await s.state.createAccount({ email: 'held@example.org', plan: 'free' });
    const { key: unseen } = await s.state.createKey(account.id);
    let letGo = () => {};
    const gate = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    let waiting = false;
    const authenticate = s.state.authenticate.bind(s.state);
    s.state.authenticate = async (key) => {
      waiting = true;
      await gate;
      return authenticate(key);
    };
    const held = get(s, '/v1/elements/Fe', { authorization: `Bearer ${unseen}` });
    // Its snapshot is taken before its key is looked up.
    await until(() => (waiting ? true : undefined));

    // Clients reading all along, each answer with when its request began.
    const answers: (Got & { began: number })[] = [];
    let reading = true;
    const readers = Array.from({ length: 4 }, async (_, i) => {
      while (reading) {
        const began = performance.now();
        answers.push({ ...(await get(s, i % 2 ? '/v1/elements' : '/v1/elements/Fe')), began });
      }
    });

    damage(snapshotFile(s.dir, s.newer));
    const setAside = await until(() => s.forgotten.get(s.newer));
    expect(served.isSetAside).toBe(true);
    expect(served.memo.size).toBe(0);
    letGo();
    expect(await held).toMatchObject({ status: 503, code: 'data_unavailable' });

    // Then quarantined, and the previous version served.
    await until(() => (s.snapshots.version === s.older ? true : undefined));
    const switched = performance.now();
    await until(() => (answers.filter((a) => a.began > switched).length >= 8 ? true : undefined));
    reading = false;
    await Promise.all(readers);
    expect(quarantined(s.dir), s.logged.join('\n')).toHaveLength(1);

    const after = answers.filter((a) => a.began >= setAside);
    expect(after.length).toBeGreaterThan(0);
    // Nothing from the damaged version once it was set aside: the older one's answers, or 503.
    expect(after.filter((a) => a.dataVersion === s.newer)).toEqual([]);
    for (const a of after)
      expect(a.status === 200 ? a.dataVersion : a.code).toBe(a.status === 200 ? s.older : 'data_unavailable');
    // The URL cached from the damaged version answers from the older one.
    expect(await get(s, '/v1/elements/Fe')).toMatchObject({ status: 200, dataVersion: s.older });
    expect(await get(s, '/v1/elements/Fe', bearer)).toMatchObject({ status: 200, dataVersion: s.older });
  });

  it('a read that meets a damaged page SQLite sees: 503 data_unavailable, and the file is set aside and checked', async () => {
    const s = await serveTwoVersions();
    const bearer = { authorization: `Bearer ${s.key}` };
    expect(await get(s, '/v1/subjects/search?q=iron', bearer)).toMatchObject({
      status: 200,
      dataVersion: s.newer,
    });
    const before = fileStamp(snapshotFile(s.dir, s.newer))!.key;
    // Its stamp kept: the change is not seen, only met.
    damage(snapshotFile(s.dir, s.newer), { firstPage: true, keepStamp: true });
    expect(fileStamp(snapshotFile(s.dir, s.newer))!.key).toBe(before);
    const met = await fetch(`${s.server.url}/v1/subjects/search?q=copper`, { headers: bearer });
    expect(met.status).toBe(503);
    expect(((await met.json()) as { code: string }).code).toBe('data_unavailable');
    expect(met.headers.get('retry-after')).toBe('1');
    expect(s.forgotten.has(s.newer)).toBe(true);
    await until(() => (s.snapshots.version === s.older ? true : undefined));
    expect(quarantined(s.dir), s.logged.join('\n')).toEqual([
      expect.stringMatching(new RegExp(`^${s.newer}-`)),
    ]);
    expect(await get(s, '/v1/subjects/search?q=iron', bearer)).toMatchObject({
      status: 200,
      dataVersion: s.older,
    });
  });
});

describe('a web page that meets a damaged page of the served snapshot', () => {
  it('is a 503 page, never a 500, and the file is set aside and checked', async () => {
    const s = await serveTwoVersions();
    const page = (path: string) => fetch(`${s.server.url}${path}`, { headers: { accept: 'text/html' } });
    expect((await page('/elements/Fe')).status).toBe(200);
    damage(snapshotFile(s.dir, s.newer), { firstPage: true, keepStamp: true });
    // An element page not rendered yet reads the file.
    const met = await page('/elements/Ni');
    expect([met.status, met.headers.get('retry-after')]).toEqual([503, '5']);
    expect(await met.text()).toContain('being checked or replaced');
    expect(s.forgotten.has(s.newer)).toBe(true);
    await until(() => (s.snapshots.version === s.older ? true : undefined));
    const again = await page('/elements/Ni');
    expect(again.status).toBe(200);
    expect(await again.text()).toContain(`Data version ${s.older}`);
  });
});

describe('a pinned snapshot damaged while open', () => {
  it('its answers kept by the MCP cache are never given again: the pinned read is refused', async () => {
    const s = await serveTwoVersions();
    const pinned = { symbol: 'Fe', data_version: s.older };
    expect(await tool(s, 'get_element_ri', pinned)).toEqual({ dataVersion: s.older });
    expect(await tool(s, 'get_element_ri', pinned)).toEqual({ dataVersion: s.older });
    expect(await get(s, `/v1/elements/Fe?data_version=${s.older}`)).toMatchObject({ status: 200 });

    damage(snapshotFile(s.dir, s.older));
    await until(() => s.forgotten.get(s.older));
    await until(() => (quarantined(s.dir).length === 1 ? true : undefined));
    // No longer kept (quarantined, and not the current version): 410, from REST and MCP alike.
    expect(await tool(s, 'get_element_ri', pinned)).toEqual({ error: 'data_version_gone' });
    expect(await get(s, `/v1/elements/Fe?data_version=${s.older}`)).toMatchObject({
      status: 410,
      code: 'data_version_gone',
    });
    // The current version is untouched.
    expect(s.snapshots.version).toBe(s.newer);
    expect(await tool(s, 'get_element_ri', { symbol: 'Fe' })).toEqual({ dataVersion: s.newer });
  });
});

import { closeSync, cpSync, openSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readPointer, snapshotFile } from '../../../src/snapshot/folder.js';
import { ri, riAsync, riBackground, stop, until } from '../../helpers/cli.js';
import { TITLES, tempDir, work, writeWorks } from '../../helpers/works.js';

/**
 * Zeroes the first page and 64 KiB in the middle of a file. The first page holds SQLite's change
 * counter: a connection that has the file open reads it at each query and then meets the damage
 * rather than answering from the pages it cached before.
 */
function damage(path: string): void {
  const size = statSync(path).size;
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, Buffer.alloc(4096, 0), 0, 4096, 0);
    writeSync(fd, Buffer.alloc(64 * 1024, 0), 0, 64 * 1024, Math.floor(size / 2 / 4096) * 4096);
  } finally {
    closeSync(fd);
  }
}

interface TwoSnapshots {
  dataDir: string;
  dir: string;
  older: string;
  newer: string;
  key: string;
}

/**
 * Two published snapshots (older, then newer = CURRENT) built by the CLI, and a professional key
 * (`only`: the older one alone, no key). Each is built once for the file (two ingests and builds,
 * about 10 s) and each test gets a copy of its own to damage.
 */
const built = new Map<boolean, TwoSnapshots>();
function twoSnapshots(options: { only?: boolean } = {}): TwoSnapshots {
  const only = options.only === true;
  const made = built.get(only) ?? buildTwoSnapshots(only);
  built.set(only, made);
  const dataDir = join(tempDir('ri-worker-recovery-'), 'data');
  cpSync(made.dataDir, dataDir, { recursive: true });
  return { ...made, dataDir, dir: join(dataDir, 'snapshots') };
}

function buildTwoSnapshots(only: boolean): TwoSnapshots {
  const root = tempDir('ri-worker-recovery-built-');
  const dataDir = join(root, 'data');
  const env = { DATA_DIR: dataDir };
  const first = writeWorks(
    join(root, 'works.jsonl'),
    TITLES.map((title, i) => work(i + 1, { title })),
  );
  expect(ri(['ingest', first, '--data-dir', dataDir]).status).toBe(0);
  expect(ri(['build', '--data-dir', dataDir]).status).toBe(0);
  const older = readPointer(join(dataDir, 'snapshots'), 'CURRENT')!;
  if (only) return { dataDir, dir: join(dataDir, 'snapshots'), older, newer: older, key: '' };
  const more = writeWorks(
    join(root, 'more.jsonl'),
    Array.from({ length: 30 }, (_, i) => work(1000 + i, { title: `Iron nitride magnets ${i}` })),
  );
  expect(ri(['ingest', more, '--data-dir', dataDir]).status).toBe(0);
  expect(ri(['build', '--data-dir', dataDir]).status).toBe(0);
  const keyRun = ri(['keys', 'create', '--plan', 'professional', '--email', 'w@example.org'], env);
  expect(keyRun.status, keyRun.stderr).toBe(0);
  return {
    dataDir,
    dir: join(dataDir, 'snapshots'),
    older,
    newer: readPointer(join(dataDir, 'snapshots'), 'CURRENT')!,
    key: keyRun.stdout.trim().split('\n').at(-1)!,
  };
}

interface Readiness {
  ready: boolean;
  status: string;
  data_version: string | null;
  problem?: string;
  workers?: string;
}

interface LogLine {
  msg: string;
  status?: number;
  path?: string;
  req_id?: string;
}

function serve(dataDir: string, env: Record<string, string> = {}) {
  return riBackground(
    ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
    { LOG_LEVEL: 'info', DATA_DIR: dataDir, ...env },
    /at (http:\/\/\S+)\/v1/,
  );
}

const readyzOf = async (base: string) => (await (await fetch(`${base}/readyz`)).json()) as Readiness;

describe('research and lab in worker threads across a damaged snapshot and its repair', () => {
  it('answer from the rewritten file after `ri build`, never a 400, and every answer is logged', async () => {
    const { dataDir, dir, older, newer, key } = twoSnapshots();
    const server = serve(dataDir, { WORKER_THREADS: '1' });
    try {
      const base = (await server.started)[1]!;
      const auth = { headers: { authorization: `Bearer ${key}` } };
      const heavy = async () => {
        const out: { path: string; status: number; body: Record<string, unknown> }[] = [];
        for (const path of ['/v1/research?q=iron%20oxide%20catalysts&page_size=3', '/v1/lab/quote?q=Fe'])
          for (let i = 0; i < 2; i++) {
            const res = await fetch(`${base}${path}`, auth);
            out.push({ path, status: res.status, body: (await res.json()) as Record<string, unknown> });
          }
        return out;
      };
      const readyz = () => readyzOf(base);

      // The worker opens the served file.
      for (const r of await heavy()) expect(r.status, JSON.stringify(r.body)).toBe(200);

      // Damaged while served: the server quarantines it and serves the older one.
      damage(snapshotFile(dir, newer));
      const seen: { status: number; body: Record<string, unknown> }[] = [];
      await until(async () => {
        seen.push(...(await heavy()));
        return (await readyz()).data_version === older ? true : undefined;
      }, 20_000);
      seen.push(...(await heavy()));
      expect(seen.filter((r) => r.status !== 200 && r.status !== 503)).toEqual([]);
      for (const r of seen.filter((r) => r.status === 503))
        expect(r.body).toMatchObject({ code: expect.any(String) });

      // The documented repair: `ri build` rewrites the file under its name; the server takes it.
      // Run beside this process's event loop, not blocking it: blocked for longer than the server's
      // keep-alive timeout, fetch's next request went out on a socket the server had just closed
      // (a slow machine's `ri build` takes more than 5 s).
      const build = await riAsync(['build', '--data-dir', dataDir]);
      expect(build.status, build.stderr).toBe(0);
      expect(build.stdout.trim()).toBe(newer);
      await until(async () => ((await readyz()).data_version === newer ? true : undefined), 20_000);

      // The workers answer from the rewritten file, as the main thread does.
      const after = await until(async () => {
        const rs = await heavy();
        return rs.every((r) => r.status !== 503) ? rs : undefined;
      }, 20_000);
      for (const r of after) {
        expect(r.status, `${r.path}: ${JSON.stringify(r.body)}`).toBe(200);
        expect(r.body.data_version).toBe(newer);
      }
      // Ready again (its workers included) once the probe of the rewritten file is answered.
      await until(async () => ((await readyz()).status === 'ok' ? true : undefined), 20_000);
      expect(await readyz()).toMatchObject({ ready: true, status: 'ok', data_version: newer });

      // Every answer given is in the request log, with its status (written asynchronously: wait).
      const given = 4 + seen.length + after.length;
      const logged = () =>
        server
          .output()
          .stdout.split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as LogLine)
          .filter((l) => l.msg === 'request' && (l.path === '/v1/research' || l.path === '/v1/lab/quote'));
      const lines = await until(() => {
        const found = logged();
        return found.length >= given ? found : undefined;
      }, 5_000);
      expect(lines.length).toBeGreaterThanOrEqual(given);
      expect(lines.filter((l) => l.status === 400)).toEqual([]);
    } finally {
      await stop(server.child);
    }
  });
});

describe('a CURRENT pointer that names no snapshot', () => {
  it('serves the newest published snapshot (not PREVIOUS), while serving and on start, and says so', async () => {
    const { dataDir, dir, older, newer } = twoSnapshots();
    const first = serve(dataDir);
    try {
      const base = (await first.started)[1]!;
      expect(await readyzOf(base)).toMatchObject({ status: 'ok', data_version: newer });
      writeFileSync(join(dir, 'CURRENT'), 'not a version\n');
      await until(() => (/CURRENT pointer names no snapshot/.test(first.output().stdout) ? true : undefined));
      const ready = await readyzOf(base);
      expect(ready).toMatchObject({ ready: true, status: 'degraded', data_version: newer });
      expect(ready.problem).toMatch(new RegExp(`serving ${newer}`));
      const fe = await fetch(`${base}/v1/elements/Fe`);
      expect(((await fe.json()) as { data_version: string }).data_version).toBe(newer);
      expect(first.output().stdout).not.toMatch(new RegExp(`serving snapshot ${older}`));
    } finally {
      await stop(first.child);
    }

    // Started with the pointer still garbage: the same, and the bundled sample is not built.
    const second = serve(dataDir);
    try {
      const base = (await second.started)[1]!;
      expect(await readyzOf(base)).toMatchObject({ ready: true, status: 'degraded', data_version: newer });
      expect(second.output().stderr).not.toMatch(/bundled/);
      expect(second.output().stdout).toMatch(/CURRENT pointer names no snapshot/);
    } finally {
      await stop(second.child);
    }
    // `ri build` writes the pointer again (the corpus is unchanged: the same version).
    expect(ri(['build', '--data-dir', dataDir]).status).toBe(0);
    expect(readPointer(dir, 'CURRENT')).toBe(newer);
  });
});

describe('the only snapshot damaged while served', () => {
  it('answers 503 saying the snapshot is being checked or replaced, not that none is published', async () => {
    const { dataDir, dir, older: version } = twoSnapshots({ only: true });
    const server = serve(dataDir);
    try {
      const base = (await server.started)[1]!;
      expect((await fetch(`${base}/v1/elements/Fe`)).status).toBe(200);
      damage(snapshotFile(dir, version));
      await until(async () => ((await readyzOf(base)).data_version === null ? true : undefined));
      const res = await fetch(`${base}/v1/elements/Fe`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { code: string; detail: string };
      expect(body.code).toBe('data_unavailable');
      expect(body.detail).toMatch(/being checked or replaced/);
      expect(body.detail).not.toMatch(/published yet/);
      expect(res.headers.get('retry-after')).toBe('1');
      // The repair brings it back (beside the event loop: see the first test).
      expect((await riAsync(['build', '--data-dir', dataDir])).status).toBe(0);
      await until(async () => ((await readyzOf(base)).data_version === version ? true : undefined));
      expect((await fetch(`${base}/v1/elements/Fe`)).status).toBe(200);
    } finally {
      await stop(server.child);
    }
  });
});

describe('a read pinned to the current version while its file is damaged', () => {
  it('answers 503 data_unavailable with Retry-After (the version is being repaired, not gone), then the rebuilt file', async () => {
    const { dataDir, dir, older, newer, key } = twoSnapshots();
    const server = serve(dataDir);
    try {
      const base = (await server.started)[1]!;
      const auth = { headers: { authorization: `Bearer ${key}` } };
      const pinned = () => fetch(`${base}/v1/elements/Fe?data_version=${newer}`, auth);
      expect((await pinned()).status).toBe(200);
      damage(snapshotFile(dir, newer));
      await until(async () => ((await readyzOf(base)).data_version === older ? true : undefined), 20_000);
      // A paid call's retry is pinned so too (the version its payment bought): a 410 would tell
      // the payer the answer it paid for is gone for good.
      const during = await pinned();
      const body = (await during.json()) as { code: string; detail: string };
      expect([during.status, body.code]).toEqual([503, 'data_unavailable']);
      expect(during.headers.get('retry-after')).toBe('1');
      expect(body.detail).toMatch(/being checked or replaced/);
      // A version that is really gone is still 410.
      const gone = await fetch(`${base}/v1/elements/Fe?data_version=0123456789abcdef`, auth);
      expect(gone.status).toBe(410);

      expect((await riAsync(['build', '--data-dir', dataDir])).status).toBe(0);
      await until(async () => ((await readyzOf(base)).data_version === newer ? true : undefined), 20_000);
      const after = await pinned();
      expect(after.status).toBe(200);
      expect(((await after.json()) as { data_version: string }).data_version).toBe(newer);
    } finally {
      await stop(server.child);
    }
  });
});

interface Listed {
  data_version: string;
  published_at: string;
  current: boolean;
}

/** Writes a pointer as a publish does (a whole file renamed into place), so no reader sees half of it. */
function writePointer(dir: string, name: 'CURRENT' | 'PREVIOUS', text: string): void {
  writeFileSync(join(dir, `.${name}.test`), text);
  renameSync(join(dir, `.${name}.test`), join(dir, name));
}

describe('ri rollback', () => {
  it('publishes the previous snapshot again: first in /v1/versions, and what a damaged CURRENT falls back to', async () => {
    const { dataDir, dir, older, newer } = twoSnapshots();
    const server = serve(dataDir);
    try {
      const base = (await server.started)[1]!;
      const versions = async () =>
        ((await (await fetch(`${base}/v1/versions`)).json()) as { versions: Listed[] }).versions;
      const rollback = (to: string) => {
        const r = ri(['rollback', '--data-dir', dataDir]);
        expect(r.status, r.stderr).toBe(0);
        expect(r.stdout.trim()).toBe(to);
      };
      const serving = (version: string) =>
        until(async () => {
          const ready = await readyzOf(base);
          return ready.status === 'ok' && ready.data_version === version ? true : undefined;
        });
      const published = await versions();
      expect(published.map((v) => [v.data_version, v.current])).toEqual([
        [newer, true],
        [older, false],
      ]);

      rollback(older);
      await serving(older);
      const listed = await versions();
      expect(listed.map((v) => [v.data_version, v.current])).toEqual([
        [older, true],
        [newer, false],
      ]);
      // When it last became current: now, after the newer one's publication.
      expect(listed[0]!.published_at > published[0]!.published_at).toBe(true);
      expect(listed[1]!.published_at).toBe(published[0]!.published_at);

      // A CURRENT naming nothing: the publication log's newest is served, the one rolled back to.
      writePointer(dir, 'CURRENT', 'garbage\n');
      await until(() =>
        /CURRENT pointer names no snapshot/.test(server.output().stdout) ? true : undefined,
      );
      expect(await readyzOf(base)).toMatchObject({ status: 'degraded', data_version: older });
      writePointer(dir, 'CURRENT', `${older}\n`);
      await serving(older);

      // A second rollback returns to the version rolled back from.
      rollback(newer);
      await serving(newer);
      expect((await versions()).map((v) => v.data_version)).toEqual([newer, older]);

      // Without PREVIOUS (lost, or a rollback stopped after writing it: it then names the current
      // version), the previous is the publication log's.
      rmSync(join(dir, 'PREVIOUS'));
      rollback(older);
      await serving(older);
      writePointer(dir, 'PREVIOUS', `${older}\n`);
      rollback(newer);
      await serving(newer);
      expect((await versions()).map((v) => v.data_version)).toEqual([newer, older]);
    } finally {
      await stop(server.child);
    }
  });
});

import { closeSync, existsSync, openSync, readdirSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentHash } from '../../../src/snapshot/file-hash.js';
import { readPointer, snapshotFile } from '../../../src/snapshot/folder.js';
import { ri, riAsync, riBackground, stop, until } from '../../helpers/cli.js';
import { TITLES, tempDir, work, writeWorks } from '../../helpers/works.js';

/** Overwrites `length` bytes in the middle of a file: flipped bytes, or zeroed pages. */
function damage(path: string, fill: number | 'flip', length = 8192): void {
  const size = statSync(path).size;
  const fd = openSync(path, 'r+');
  try {
    const bytes = Buffer.alloc(length, fill === 'flip' ? 0 : fill);
    if (fill === 'flip') for (let i = 0; i < length; i++) bytes[i] = (i * 37 + 11) & 0xff;
    writeSync(fd, bytes, 0, length, Math.floor(size / 2 / 4096) * 4096);
  } finally {
    closeSync(fd);
  }
}

/** A data directory with one published snapshot of a few tagged works (ingested and built by the CLI). */
function dataDirWith(titles: string[]): { dataDir: string; dir: string } {
  const root = tempDir('ri-corrupt-');
  const works = join(root, 'works.jsonl');
  writeWorks(
    works,
    titles.map((title, i) => work(i + 1, { title })),
  );
  const dataDir = join(root, 'data');
  expect(ri(['ingest', works, '--data-dir', dataDir]).status).toBe(0);
  expect(ri(['build', '--data-dir', dataDir]).status).toBe(0);
  return { dataDir, dir: join(dataDir, 'snapshots') };
}

function serve(dataDir: string) {
  return riBackground(
    ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
    { LOG_LEVEL: 'info' },
    /at (http:\/\/\S+)\/v1/,
  );
}

interface Readiness {
  ready: boolean;
  status: string;
  data_version: string | null;
  current_version: string | null;
  problem?: string;
}

describe('a damaged current snapshot', () => {
  it('is rebuilt on start when it is the only one, and the right numbers are served again', async () => {
    const { dataDir, dir } = dataDirWith(TITLES);
    const version = readPointer(dir, 'CURRENT')!;
    const first = serve(dataDir);
    const base = (await first.started)[1]!;
    const good = await (await fetch(`${base}/v1/elements/Fe`)).json();
    expect(await stop(first.child)).toBe(0);

    damage(snapshotFile(dir, version), 'flip');
    expect(await contentHash(snapshotFile(dir, version))).not.toBe(version);

    const second = serve(dataDir);
    const again = (await second.started)[1]!;
    const ready = (await (await fetch(`${again}/readyz`)).json()) as Readiness;
    expect(ready).toMatchObject({
      ready: true,
      status: 'ok',
      data_version: version,
      current_version: version,
    });
    const res = await fetch(`${again}/v1/elements/Fe`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(good);
    expect(await contentHash(snapshotFile(dir, version))).toBe(version);
    expect(second.output().stderr).toMatch(/missing or damaged; rebuilding/);
    expect(await stop(second.child)).toBe(0);
  });

  it('is quarantined and the previous one served (readyz degraded) until `ri build` rewrites it', async () => {
    const { dataDir, dir } = dataDirWith(TITLES);
    const older = readPointer(dir, 'CURRENT')!;
    const more = join(dataDir, '..', 'more.jsonl');
    writeWorks(
      more,
      Array.from({ length: 30 }, (_, i) => work(1000 + i, { title: `Iron nitride magnets ${i}` })),
    );
    expect(ri(['ingest', more, '--data-dir', dataDir]).status).toBe(0);
    expect(ri(['build', '--data-dir', dataDir]).status).toBe(0);
    const newer = readPointer(dir, 'CURRENT')!;
    expect(newer).not.toBe(older);
    damage(snapshotFile(dir, newer), 0);

    const server = serve(dataDir);
    const base = (await server.started)[1]!;
    const readyz = async () => (await (await fetch(`${base}/readyz`)).json()) as Readiness;
    expect(await readyz()).toMatchObject({
      ready: true,
      status: 'degraded',
      data_version: older,
      current_version: newer,
    });
    const fe = await fetch(`${base}/v1/elements/Fe`);
    expect(fe.status).toBe(200);
    expect(((await fe.json()) as { data_version: string }).data_version).toBe(older);
    expect(server.output().stdout).toMatch(/damaged/);
    expect(readdirSync(join(dir, 'quarantine'))).toHaveLength(1);

    // The operator's fix: ri build writes a good copy under the same name; the server takes it.
    // Beside the event loop: blocked for longer than the server's keep-alive timeout, fetch's next
    // request went out on a connection the server had just closed.
    const build = await riAsync(['build', '--data-dir', dataDir]);
    expect(build.status).toBe(0);
    expect(build.stdout.trim()).toBe(newer);
    expect(build.stderr).toMatch(/rewrote a missing or damaged file/);
    await until(async () => ((await readyz()).data_version === newer ? true : undefined), 15_000);
    expect(await readyz()).toMatchObject({ status: 'ok', data_version: newer });

    // Damage while serving: requests never see a 500, and the server falls back again.
    const statuses = new Set<number>();
    damage(snapshotFile(dir, newer), 0, 64 * 1024);
    await until(async () => {
      for (const path of ['/v1/elements', '/v1/elements/Fe', '/v1/elements/Ni'])
        statuses.add((await fetch(`${base}${path}`)).status);
      return (await readyz()).data_version === older ? true : undefined;
    }, 15_000);
    expect([...statuses].filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(await readyz()).toMatchObject({ status: 'degraded', current_version: newer });
    expect(await stop(server.child)).toBe(0);
  });

  it('leaves no half-written files of a killed build behind, and keeps those of a running one', () => {
    const { dataDir, dir } = dataDirWith(TITLES.slice(0, 10));
    // A build killed with SIGKILL leaves its temporary file and its titles' index's side file,
    // each with SQLite's journal; its process (pid) is gone.
    const left = ['', '-journal', '-titles', '-titles-journal', '-titles-wal'].map((end) =>
      join(dir, `.build-999999999-1.sqlite${end}`),
    );
    // This process is alive: its files are a running build's.
    const running = ['', '-titles-journal'].map((end) => join(dir, `.build-${process.pid}-1.sqlite${end}`));
    for (const file of [...left, ...running]) writeFileSync(file, 'partial');
    expect(ri(['build', '--data-dir', dataDir]).status).toBe(0);
    expect(left.filter((file) => existsSync(file))).toEqual([]);
    expect(running.filter((file) => existsSync(file))).toEqual(running);
  });
});

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
  it('is served at once, found damaged by its hash behind, and rebuilt when it is the only one; never a wrong number', async () => {
    const { dataDir, dir } = dataDirWith(TITLES);
    const version = readPointer(dir, 'CURRENT')!;
    const first = serve(dataDir);
    const base = (await first.started)[1]!;
    const good = await (await fetch(`${base}/v1/elements/Fe`)).json();
    expect(await stop(first.child)).toBe(0);
    // `ri serve` loaded the page checksum extension (the build made it): no whole-file hash first.
    expect(first.output().stdout).not.toMatch(/page checksums unavailable/);

    damage(snapshotFile(dir, version), 'flip');
    expect(await contentHash(snapshotFile(dir, version))).not.toBe(version);

    const second = serve(dataDir);
    const again = (await second.started)[1]!;
    const statuses = new Set<number>();
    // Rebuilt from the corpus store under the same name (the same corpus, the same bytes).
    await until(async () => {
      const res = await fetch(`${again}/v1/elements/Fe`);
      statuses.add(res.status);
      // Never an answer from the damaged bytes: the right numbers, or 503 while it is replaced.
      if (res.status === 200) expect(await res.json()).toEqual(good);
      else expect(((await res.json()) as { code: string }).code).toBe('data_unavailable');
      const ready = (await (await fetch(`${again}/readyz`)).json()) as Readiness;
      const sound = (await contentHash(snapshotFile(dir, version)).catch(() => null)) === version;
      return sound && ready.status === 'ok' && ready.data_version === version ? true : undefined;
    }, 90_000);
    expect([...statuses].filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(readdirSync(join(dir, 'quarantine'))).toHaveLength(1);
    expect(await stop(second.child)).toBe(0);
    const log = second.output().stdout;
    // Served before its hash was known (not hashed first), then condemned by it and rebuilt.
    expect(log.indexOf(`serving snapshot ${version}`)).toBeGreaterThanOrEqual(0);
    expect(log.indexOf(`serving snapshot ${version}`)).toBeLessThan(log.indexOf('is damaged'));
    expect(log).toMatch(/rebuilding the current one from the corpus store/);
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
    // Served at once (its pages checked as read), until its hash behind condemns it.
    await until(async () => ((await readyz()).data_version === older ? true : undefined), 15_000);
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

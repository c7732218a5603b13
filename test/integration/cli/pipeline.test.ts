import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ri, riAsync, riBackground, stop, until } from '../../helpers/cli.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';

const children: { kill(signal?: NodeJS.Signals): boolean }[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

async function getJson(url: string) {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('ri generate, ingest, build, serve, update, rollback', () => {
  const root = tempDir('ri-cli-');
  const corpus = join(root, 'corpus');
  const dataDir = join(root, 'data');

  it('generates, ingests and builds a synthetic corpus with a summary on stderr', () => {
    const gen = ri(['generate', '--works', '400', '--seed', '5', '--out', corpus]);
    expect(gen.status, gen.stderr).toBe(0);
    const ingest = ri(['ingest', corpus, '--data-dir', dataDir]);
    expect(ingest.status, ingest.stderr).toBe(0);
    expect(ingest.stderr).toMatch(/ingest: \d+ file\(s\) in [\d.]+ s: \d+ read, \d+ kept, \d+ replaced/);
    expect(ingest.stderr).toMatch(/skipped \(retracted \d+, paratext \d+, malformed 0, invalid 0\)/);
    const build = ri(['build', '--data-dir', dataDir]);
    expect(build.status, build.stderr).toBe(0);
    expect(build.stdout.trim()).toMatch(/^[0-9a-f]{16}$/);
    expect(readFileSync(join(dataDir, 'snapshots/CURRENT'), 'utf8').trim()).toBe(build.stdout.trim());
  });

  it('serves the snapshot, switches to a newly published one, and rolls back, without a restart', async () => {
    const server = riBackground(
      ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
      {},
      /at (http:\/\/\S+)\/v1/,
    );
    children.push(server.child);
    const [, base] = await server.started;
    const first = await getJson(`${base}/v1/elements`);
    expect(first.status).toBe(200);
    expect(first.body.count).toBe(118);
    const v1 = first.body.data_version as string;

    // A new partition with iron papers: `ri update` ingests, builds and publishes.
    const extra = Array.from({ length: 30 }, (_, i) =>
      work(990_000_000 + i, {
        title: `Iron phosphide catalysts ${i}`,
        publication_date: '2026-01-10',
        publication_year: 2026,
      }),
    );
    writeWorks(join(root, 'more/works/updated_date=2026-02-20/part_000.gz'), extra);
    // The CLI beside the test's event loop while a server holds keep-alive sockets (riAsync): a
    // loop blocked by spawnSync misses the server closing an idle one, and the next fetch on it
    // fails with "other side closed" on a loaded machine.
    const update = await riAsync(['update', join(root, 'more'), '--data-dir', dataDir]);
    expect(update.status, update.stderr).toBe(0);
    const v2 = update.stdout.trim().split('\n').at(-1)!;
    expect(v2).not.toBe(v1);
    const after = await until(async () => {
      const r = await getJson(`${base}/v1/elements/fe`);
      return r.body.data_version === v2 ? r : undefined;
    });
    expect(after.body.symbol).toBe('Fe');

    const back = await riAsync(['rollback', '--data-dir', dataDir]);
    expect(back.status, back.stderr).toBe(0);
    expect(back.stdout.trim()).toBe(v1);
    await until(async () =>
      (await getJson(`${base}/v1/elements`)).body.data_version === v1 ? true : undefined,
    );

    expect(await stop(server.child)).toBe(0);
  });

  it('reports a malformed line with its file and line number, and keeps the rest', () => {
    const file = join(root, 'bad.jsonl');
    writeFileSync(file, `${JSON.stringify(work(1))}\n{"id": broken\n${JSON.stringify(work(2))}\n`);
    const r = ri(['ingest', file, '--data-dir', join(root, 'bad-data')]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${file}:2: malformed JSON`);
    expect(r.stderr).toMatch(/3 read, 2 kept/);
  });

  it('answers a missing path and a bad option with one line and exit code 2', () => {
    const missing = ri(['ingest', join(root, 'nope'), '--data-dir', dataDir]);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^ri: cannot read .*nope/);
    expect(ri(['frobnicate']).status).toBe(2);
    expect(ri(['build', '--data-dir', join(root, 'empty')]).stderr).toMatch(/no corpus store/);
  });
});

describe('ri update --watch', () => {
  it('picks up a new partition as it appears and publishes again', async () => {
    const root = tempDir('ri-watch-');
    const folder = join(root, 'feed');
    writeWorks(join(folder, 'works/updated_date=2025-01-01/part_000.gz'), [
      work(1, { title: 'Nickel oxide films' }),
    ]);
    const dataDir = join(root, 'data');
    const watcher = riBackground(
      ['update', folder, '--watch', '--interval', '0.3', '--data-dir', dataDir],
      {},
      /^[0-9a-f]{16}$/m,
    );
    children.push(watcher.child);
    const [firstVersion] = await watcher.started;
    mkdirSync(join(folder, 'works/updated_date=2025-02-01'), { recursive: true });
    writeWorks(join(folder, 'works/updated_date=2025-02-01/part_000.gz'), [
      work(2, { title: 'Cobalt oxide films' }),
    ]);
    const second = await until(() => {
      const versions = watcher.output().stdout.trim().split('\n');
      return versions.length >= 2 ? versions.at(-1) : undefined;
    });
    expect(second).not.toBe(firstVersion);
    expect(readFileSync(join(dataDir, 'snapshots/CURRENT'), 'utf8').trim()).toBe(second);
    expect(await stop(watcher.child)).toBe(0);
  });
});

describe('ri serve on an empty data directory (what npm start does on a fresh clone)', () => {
  it('builds the bundled real sample first, then serves it', async () => {
    const dataDir = join(tempDir('ri-fresh-'), 'data');
    const server = riBackground(
      ['serve', '--port', '0', '--host', '127.0.0.1'],
      { DATA_DIR: dataDir },
      /at (http:\/\/\S+)\/v1/,
    );
    children.push(server.child);
    const [, base] = await server.started;
    const { status, body } = await getJson(`${base}/v1/elements`);
    expect(status).toBe(200);
    expect(body.count).toBe(118);
    const iron = (body.elements as { symbol: string; paper_count: number }[]).find((e) => e.symbol === 'Fe')!;
    expect(iron.paper_count).toBeGreaterThan(500);
    expect(server.output().stderr).toMatch(/building one from the bundled real sample/);
    expect(await stop(server.child)).toBe(0);
  }, 120_000);
});

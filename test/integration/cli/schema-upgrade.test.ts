import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { readPointer, snapshotFile } from '../../../src/snapshot/folder.js';
import { pageChecksums } from '../../../src/snapshot/page-checksums.js';
import { SNAPSHOT_SCHEMA_VERSION } from '../../../src/snapshot/schema.js';
import { snapshotSchemaVersion } from '../../../src/snapshot/snapshot.js';
import { publishSnapshot } from '../../../src/snapshot-build/publish.js';
import { ri, riBackground, stop } from '../../helpers/cli.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';

describe('ri serve on a snapshot of an older schema', () => {
  it.each([
    [
      '1, without the lab tables',
      "DROP TABLE postings; DROP TABLE paper_columns; UPDATE meta SET value = '1' WHERE key = 'schema_version'",
      1,
    ],
    [
      "2, without research's columns",
      "DELETE FROM paper_columns WHERE name IN ('impact_score', 'pub_date', 'refs_start', 'refs'); UPDATE meta SET value = '2' WHERE key = 'schema_version'",
      2,
    ],
  ])('rebuilds a snapshot of schema %s from the corpus store before serving it', async (_, older, schema) => {
    const root = tempDir('ri-upgrade-');
    const works = join(root, 'works.jsonl');
    writeWorks(works, [
      work(1, { title: 'Nickel iron oxygen evolution' }),
      work(2, { title: 'Copper CO2 reduction' }),
    ]);
    const dataDir = join(root, 'data');
    expect(ri(['ingest', works, '--data-dir', dataDir]).status).toBe(0);
    expect(ri(['build', '--data-dir', dataDir]).status).toBe(0);
    // Make the published snapshot look like one from an earlier release.
    const dir = join(dataDir, 'snapshots');
    const old = join(dir, '.old.sqlite');
    copyFileSync(snapshotFile(dir, readPointer(dir, 'CURRENT')!), old);
    // Written through the page checksum VFS, so its changed pages keep checksums that match.
    pageChecksums();
    const db = new Database(old);
    db.exec(older);
    db.close();
    const published = await publishSnapshot(dir, old);
    expect(snapshotSchemaVersion(snapshotFile(dir, published.version))).toBe(schema);

    const server = riBackground(
      ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
      {},
      /at (http:\/\/\S+)\/v1/,
    );
    const base = (await server.started)[1]!;
    const current = readPointer(dir, 'CURRENT')!;
    expect(current).not.toBe(published.version);
    expect(snapshotSchemaVersion(snapshotFile(dir, current))).toBe(SNAPSHOT_SCHEMA_VERSION);
    expect(((await (await fetch(`${base}/readyz`)).json()) as { data_version: string }).data_version).toBe(
      current,
    );
    // Research reads the new columns: an answer, not data_unavailable.
    const created = ri(['keys', 'create', '--plan', 'personal', '--email', 'upgrade@example.org'], {
      DATA_DIR: dataDir,
    });
    expect(created.status, created.stderr).toBe(0);
    const answer = await fetch(`${base}/v1/research?q=nickel%20iron&lenses=foundational,now`, {
      headers: { authorization: `Bearer ${created.stdout.trim().split('\n').at(-1)}` },
    });
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(await stop(server.child)).toBe(0);
  });
});

import { createHash } from 'node:crypto';
import {
  createReadStream,
  existsSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { DuckDBAppender } from '@duckdb/node-api';
import { EXPORT_TABLES, type ExportColumn, exportFileName } from '../core/exports.js';
import {
  type ExportFile,
  type ExportFormat,
  type ExportManifest,
  exportManifestPath,
  exportsFolder,
  exportsRoot,
} from '../snapshot/exports.js';
import { readPointer, snapshotFile } from '../snapshot/folder.js';
import { Snapshot } from '../snapshot/snapshot.js';
import { keptVersions } from '../snapshot/versions.js';
import { fsyncPath } from '../util/atomic-file.js';

/**
 * Writes a published snapshot's whole-table exports (core/exports.ts: the tables) once, with
 * DuckDB: each table as Parquet (zstd) and as gzip CSV, then a manifest of their sizes, sha256
 * and rows. Everything is written into a folder of its own under a temporary name and renamed
 * into place whole, so a failure half way (a full disk, a crash) leaves no file of it behind
 * and the version's exports are either all there or not at all; the half-written folder of a
 * process that died is removed at the next publication (snapshot-build/publish.ts).
 */
let writing = 0;

export interface ExportsWritten {
  /** False when the version already had its exports (another process, or an earlier start). */
  written: boolean;
  seconds: number;
}

export async function writeExports(snapshotDir: string, version: string): Promise<ExportsWritten> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const target = exportsFolder(snapshotDir, version);
  if (existsSync(exportManifestPath(target))) return { written: false, seconds: seconds() };
  const root = exportsRoot(snapshotDir);
  mkdirSync(root, { recursive: true });
  const tmp = join(root, `.writing-${version}-${process.pid}-${writing++}`);
  mkdirSync(tmp);
  try {
    const rows = await writeTables(snapshotFile(snapshotDir, version), version, tmp);
    const files: ExportFile[] = [];
    for (const { table } of EXPORT_TABLES)
      for (const format of ['parquet', 'csv'] as ExportFormat[]) {
        const file = exportFileName(table, format);
        const path = join(tmp, file);
        fsyncPath(path);
        files.push({
          file,
          table,
          format,
          bytes: statSync(path).size,
          sha256: await sha256(path),
          rows: rows.get(table)!,
        });
      }
    const manifest: ExportManifest = { data_version: version, files };
    writeFileSync(exportManifestPath(tmp), `${JSON.stringify(manifest, null, 2)}\n`);
    fsyncPath(exportManifestPath(tmp));
    fsyncPath(tmp);
    try {
      renameSync(tmp, target);
    } catch (e) {
      // Another process (a replica, a build) put the same version's exports in place first.
      if (existsSync(exportManifestPath(target))) {
        rmSync(tmp, { recursive: true, force: true });
        return { written: false, seconds: seconds() };
      }
      throw e;
    }
    fsyncPath(root);
    return { written: true, seconds: seconds() };
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
}

/** Each table into an in-memory DuckDB table, then COPY to its two files; the rows per table. */
async function writeTables(path: string, version: string, folder: string): Promise<Map<string, number>> {
  const snapshot = new Snapshot(version, path, { mmap: false, cacheKib: 16_384 });
  // DuckDB loaded when exports are written, not at every server's start.
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const con = await db.connect();
  const counts = new Map<string, number>();
  try {
    for (const table of EXPORT_TABLES) {
      const columns = table.columns.map((c) => `${quoted(c.name)} ${c.type}`).join(', ');
      await con.run(`CREATE TABLE ${quoted(table.table)} (${columns})`);
      const appender = await con.createAppender(table.table);
      let n = 0;
      for (const row of table.rows(snapshot)) {
        for (let i = 0; i < row.length; i++) append(appender, table.columns[i]!, row[i]!);
        appender.endRow();
        n++;
      }
      appender.closeSync();
      counts.set(table.table, n);
      const source = `(SELECT * FROM ${quoted(table.table)})`;
      await con.run(
        `COPY ${source} TO ${literal(join(folder, exportFileName(table.table, 'parquet')))} (FORMAT parquet, COMPRESSION zstd)`,
      );
      await con.run(
        `COPY ${source} TO ${literal(join(folder, exportFileName(table.table, 'csv')))} (FORMAT csv, HEADER true, COMPRESSION gzip)`,
      );
      await con.run(`DROP TABLE ${quoted(table.table)}`);
    }
  } finally {
    con.closeSync();
    db.closeSync();
    snapshot.retire();
  }
  return counts;
}

function append(appender: DuckDBAppender, column: ExportColumn, value: string | number | null): void {
  if (value === null) appender.appendNull();
  else if (column.type === 'VARCHAR') appender.appendVarchar(String(value));
  else if (column.type === 'INTEGER') appender.appendInteger(Number(value));
  else appender.appendDouble(Number(value));
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

function sha256(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/**
 * The exports of every kept version that has none (the current one first), one after the other:
 * what a server does at its start and when it switches to a snapshot, so that snapshots published
 * by a build that wrote none (or whose writing failed) get theirs. A failure is reported, not thrown.
 */
export function writeMissingExports(
  snapshotDir: string,
  log: (msg: string, fields?: Record<string, unknown>) => void,
): Promise<void> {
  // One pass at a time in a process: a switch during the start's pass waits for it.
  pass = pass.then(() => writeMissing(snapshotDir, log));
  return pass;
}
let pass: Promise<void> = Promise.resolve();

async function writeMissing(
  snapshotDir: string,
  log: (msg: string, fields?: Record<string, unknown>) => void,
): Promise<void> {
  const current = readPointer(snapshotDir, 'CURRENT');
  const versions = keptVersions(snapshotDir).map((v) => v.data_version);
  const order = current ? [current, ...versions.filter((v) => v !== current)] : versions;
  for (const version of order) {
    if (existsSync(exportManifestPath(exportsFolder(snapshotDir, version)))) continue;
    try {
      const { written, seconds } = await writeExports(snapshotDir, version);
      if (written) log('exports written', { data_version: version, seconds: Number(seconds.toFixed(2)) });
    } catch (e) {
      log('exports not written', { data_version: version, err: (e as Error).message });
    }
  }
}

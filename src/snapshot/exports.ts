import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileStamp } from './folder.js';

/**
 * Where a published snapshot's whole-table exports live: `exports/<data_version>/` beside the
 * snapshot files, each file named `<table>.parquet` or `<table>.csv.gz`, with `manifest.json`
 * listing them (size, sha256, rows). The folder is written elsewhere under a temporary name and
 * renamed into place whole (src/exports/write-exports.ts), so a folder that is there is complete;
 * it is removed with its snapshot when that one is pruned (src/snapshot-build/publish.ts).
 */
const EXPORTS_FOLDER = 'exports';
const MANIFEST = 'manifest.json';

/** A folder being written, `.writing-<data_version>-<pid>-<n>`: removed once its process is gone. */
export const EXPORTS_WRITING = /^\.writing-[0-9a-f]{16}-(\d+)-\d+$/;

export type ExportFormat = 'parquet' | 'csv';

export interface ExportFile {
  /** The file's name in its folder and in its URL: `elements.parquet`, `subjects.csv.gz`. */
  file: string;
  table: string;
  format: ExportFormat;
  bytes: number;
  sha256: string;
  rows: number;
}

export interface ExportManifest {
  data_version: string;
  files: ExportFile[];
}

export function exportsRoot(snapshotDir: string): string {
  return join(snapshotDir, EXPORTS_FOLDER);
}

export function exportsFolder(snapshotDir: string, version: string): string {
  return join(exportsRoot(snapshotDir), version);
}

export function exportManifestPath(folder: string): string {
  return join(folder, MANIFEST);
}

/** Manifests read, by path and file stamp: a folder pruned and written again is read again. */
const read = new Map<string, ExportManifest>();

/** The exports of a version, or null when it has none (not written yet, or its writing failed). */
export function readExportManifest(snapshotDir: string, version: string): ExportManifest | null {
  const path = exportManifestPath(exportsFolder(snapshotDir, version));
  const stamp = fileStamp(path);
  if (!stamp) return null;
  const key = `${path}:${stamp.key}`;
  let manifest = read.get(key);
  if (!manifest) {
    try {
      manifest = JSON.parse(readFileSync(path, 'utf8')) as ExportManifest;
    } catch {
      return null;
    }
    if (read.size > 64) read.clear();
    read.set(key, manifest);
  }
  return manifest;
}

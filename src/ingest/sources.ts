import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** One input file of works, with the partition date its folder names (if any). */
export interface WorksFile {
  path: string;
  bytes: number;
  partitionDate: string | null;
}

const WORKS_FILE = /\.(jsonl|json|ndjson)(\.gz)?$|^part_[^/]*\.gz$/;
const PARTITION = /updated_date=(\d{4}-\d{2}-\d{2})/;

/**
 * Expands the paths given to `ri ingest` into works files: a file is taken as it is; a folder is
 * walked for JSONL(.gz) files and OpenAlex snapshot parts (works/updated_date=YYYY-MM-DD/part_*.gz).
 * Files are ordered by partition date, then path, so older partitions are read first.
 */
export function expandWorksPaths(paths: readonly string[]): WorksFile[] {
  const files: WorksFile[] = [];
  for (const p of paths) {
    const full = resolve(p);
    const st = statSync(full); // throws ENOENT for a missing path: reported by the CLI
    if (st.isDirectory()) walk(full, files);
    else files.push(describe(full, st.size));
  }
  const unique = new Map(files.map((f) => [f.path, f]));
  return [...unique.values()].sort(
    (a, b) => (a.partitionDate ?? '').localeCompare(b.partitionDate ?? '') || a.path.localeCompare(b.path),
  );
}

function walk(dir: string, out: WorksFile[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (entry.isFile() && WORKS_FILE.test(entry.name)) out.push(describe(full, statSync(full).size));
  }
}

function describe(path: string, bytes: number): WorksFile {
  return { path, bytes, partitionDate: PARTITION.exec(path)?.[1] ?? null };
}

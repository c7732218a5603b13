#!/usr/bin/env node
// node bench/exports.mjs DATA_DIR: the time to write the whole-table exports of DATA_DIR's current
// snapshot, as `ri build` writes them at publication (src/exports/write-exports.ts), with the files'
// sizes and rows. Budget (issue 50): at most 10 s at 1M works. The snapshot is linked into a
// folder of its own under the system's temporary folder and the files written there, so the data
// folder (and any server on it) is left as it is. BENCH_REPEAT=n (default 1) writes them n times
// and reports each. Needs `npm run build`.
import { linkSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const dataDir = resolve(process.argv[2] ?? process.env.DATA_DIR ?? join(root, 'data'));
const repeat = Number(process.env.BENCH_REPEAT ?? 1);
const { writeExports } = await import(join(root, 'dist/exports/write-exports.js'));
const { readExportManifest } = await import(join(root, 'dist/snapshot/exports.js'));

const snapshots = join(dataDir, 'snapshots');
const version = readFileSync(join(snapshots, 'CURRENT'), 'utf8').trim();
const file = `${version}.sqlite`;
const meta = await import(join(root, 'dist/snapshot/snapshot.js')).then(({ Snapshot }) => {
  const s = new Snapshot(version, join(snapshots, file), { mmap: false });
  const m = { works: s.meta.corpus_papers, cutoff: s.meta.cutoff_date };
  s.retire();
  return m;
});
process.stdout.write(`exports of ${version} (${meta.works} works, cut-off ${meta.cutoff}) from ${dataDir}\n`);

for (let i = 0; i < repeat; i++) {
  const scratch = mkdtempSync(join(tmpdir(), 'ri-bench-exports-'));
  try {
    // A hard link where the folders share a file system (the snapshot is read, never written).
    try {
      linkSync(join(snapshots, file), join(scratch, file));
    } catch {
      symlinkSync(join(snapshots, file), join(scratch, file));
    }
    const { seconds } = await writeExports(scratch, version);
    const manifest = readExportManifest(scratch, version);
    const total = manifest.files.reduce((n, f) => n + f.bytes, 0);
    process.stdout.write(
      `run ${i + 1}: ${seconds.toFixed(2)} s, ${(total / 1e6).toFixed(1)} MB in ${manifest.files.length} files` +
        ` (budget 10 s at 1M works)\n`,
    );
    if (i === 0)
      for (const f of manifest.files)
        process.stdout.write(
          `  ${f.file.padEnd(26)} ${String(f.rows).padStart(9)} rows ${(f.bytes / 1e6).toFixed(2).padStart(8)} MB\n`,
        );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

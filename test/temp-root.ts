import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest's global setup: every test's temporary folders (and those of the processes it starts) go
 * under one folder of this run, removed when the run ends (KEEP_TEST_TMP=1 keeps it). Many tests
 * make a data folder of their own and leave it; a session's runs left hundreds of them, about
 * 10 GB, in the system's temporary folder. TMPDIR is read by os.tmpdir() in the test workers,
 * which start after this. What is kept across runs on purpose (the sample's build for the code,
 * test/helpers/sample.ts) stays in the system's folder: RI_TEST_CACHE names it.
 * Each project of the run calls this: the first makes the folder, the others use it.
 */
// biome-ignore lint/style/noDefaultExport: vitest reads the default export
export default function setup(): () => void {
  if (process.env.RI_TEST_CACHE !== undefined) return () => {};
  const system = tmpdir();
  const root = mkdtempSync(join(system, 'ri-tests-'));
  const before = process.env.TMPDIR;
  process.env.RI_TEST_CACHE = system;
  process.env.TMPDIR = root;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    delete process.env.RI_TEST_CACHE;
    if (process.env.KEEP_TEST_TMP !== '1') rmSync(root, { recursive: true, force: true });
  };
}

import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUNDLED_SAMPLE } from '../../src/config/paths.js';
import { writeExports } from '../../src/exports/write-exports.js';
import { openCorpusStore } from '../../src/ingest/corpus-store.js';
import { ingest } from '../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../src/ingest/sources.js';
import { readTaxonomy } from '../../src/ingest/taxonomy.js';
import { pageChecksums } from '../../src/snapshot/page-checksums.js';
import { buildSnapshot } from '../../src/snapshot-build/build-snapshot.js';
import { tempDir } from './works.js';

interface Sample {
  dataDir: string;
  snapshots: string;
  version: string;
  subjects: number;
}

/**
 * A data directory holding a snapshot of the bundled real sample, of its own (a test may change
 * it). The sample is ingested and built once for the code and data that make it (a hash of src/
 * and the fixtures names the build, kept under the system temp folder), then copied per call:
 * a copy takes a fraction of a second where a build takes about 3 s, and some 60 calls are made
 * in a full run.
 */
export async function sampleDataDir(): Promise<Sample> {
  // A test that changes its copy's snapshot then writes it through the page checksum VFS (loaded
  // for the whole process): its pages keep checksums that match, as the build's do.
  pageChecksums();
  const built = await builtSample();
  const dataDir = tempDir('ri-sample-');
  cpSync(built.dataDir, dataDir, { recursive: true, filter: (src) => !src.endsWith('sample.json') });
  return { ...built, dataDir, snapshots: join(dataDir, 'snapshots') };
}

/**
 * Where the sample's builds are kept across runs: the system's temporary folder (test/temp-root.ts
 * gives each run one of its own, removed at its end).
 */
const buildsDir = () => process.env.RI_TEST_CACHE ?? tmpdir();

/** The build of the sample for this code, made once (the first caller builds; others reuse it). */
async function builtSample(): Promise<Sample> {
  const dir = join(buildsDir(), `ri-sample-build-${codeHash()}`);
  const meta = join(dir, 'sample.json');
  if (existsSync(meta)) return JSON.parse(readFileSync(meta, 'utf8')) as Sample;
  pruneOldBuilds();
  const dataDir = tempDir('ri-sample-building-');
  const corpus = join(dataDir, 'corpus.duckdb');
  const store = await openCorpusStore(corpus);
  await store.loadTaxonomy(readTaxonomy(BUNDLED_SAMPLE.topics));
  store.close();
  await ingest(corpus, expandWorksPaths(BUNDLED_SAMPLE.works));
  const snapshots = join(dataDir, 'snapshots');
  // Its exports as `ri build` writes them (cli/pipeline.ts), before CURRENT names it.
  const result = await buildSnapshot(corpus, snapshots, {
    placed: async (version) => void (await writeExports(snapshots, version)),
  });
  const sample: Sample = {
    dataDir: dir,
    snapshots: join(dir, 'snapshots'),
    version: result.version,
    subjects: result.subjects,
  };
  writeFileSync(join(dataDir, 'sample.json'), JSON.stringify(sample));
  try {
    // Atomic: a concurrent first build in another worker either lands first (this one is dropped)
    // or finds this one complete.
    renameSync(dataDir, dir);
  } catch {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return JSON.parse(readFileSync(meta, 'utf8')) as Sample;
}

/** Builds of the sample for other code, left by earlier runs: gone after an hour unused. */
function pruneOldBuilds(): void {
  for (const name of readdirSync(buildsDir())) {
    if (!name.startsWith('ri-sample-build-')) continue;
    const path = join(buildsDir(), name);
    try {
      if (Date.now() - statSync(path).mtimeMs > 3_600_000) rmSync(path, { recursive: true, force: true });
    } catch {
      // another run removed it first
    }
  }
}

let hash: string | undefined;
/** What the sample's build depends on: every source file (TypeScript and C) and the fixtures, by content. */
function codeHash(): string {
  if (hash) return hash;
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else h.update(p).update(readFileSync(p));
    }
  };
  const root = join(import.meta.dirname, '..', '..');
  walk(join(root, 'src'));
  // The page checksum extension writes bytes of every page.
  walk(join(root, 'native'));
  for (const f of [...BUNDLED_SAMPLE.works, BUNDLED_SAMPLE.topics]) h.update(readFileSync(f));
  hash = h.digest('hex').slice(0, 16);
  return hash;
}

import { join } from 'node:path';
import { BUNDLED_SAMPLE } from '../../src/config/paths.js';
import { openCorpusStore } from '../../src/ingest/corpus-store.js';
import { ingest } from '../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../src/ingest/sources.js';
import { readTaxonomy } from '../../src/ingest/taxonomy.js';
import { buildSnapshot } from '../../src/snapshot/build-snapshot.js';
import { tempDir } from './works.js';

/** A data directory holding a snapshot of the bundled real sample (about 3 s to make). */
export async function sampleDataDir(): Promise<{
  dataDir: string;
  snapshots: string;
  version: string;
  subjects: number;
}> {
  const dataDir = tempDir('ri-sample-');
  const corpus = join(dataDir, 'corpus.duckdb');
  const store = await openCorpusStore(corpus);
  await store.loadTaxonomy(readTaxonomy(BUNDLED_SAMPLE.topics));
  store.close();
  await ingest(corpus, expandWorksPaths(BUNDLED_SAMPLE.works));
  const snapshots = join(dataDir, 'snapshots');
  const result = await buildSnapshot(corpus, snapshots);
  return { dataDir, snapshots, version: result.version, subjects: result.subjects };
}

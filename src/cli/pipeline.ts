import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config/config.js';
import { storeOptions } from '../config/memory-budget.js';
import { BUNDLED_SAMPLE, dataPaths } from '../config/paths.js';
import type { IngestCounts, IngestSummary } from '../ingest/ingest.js';
import { expandWorksPaths } from '../ingest/sources.js';
import { readTaxonomy } from '../ingest/taxonomy.js';
import { listSnapshotVersions, readPointerName, snapshotFile } from '../snapshot/folder.js';
import { startsSound } from '../snapshot/integrity.js';
import { SNAPSHOT_SCHEMA_VERSION } from '../snapshot/schema.js';
import { type SnapshotManager, snapshotSchemaVersion } from '../snapshot/snapshot.js';
import { CliError } from './cli-error.js';
import { ingestProgressReporter } from './progress.js';

/**
 * The steps the ingest, build, update and serve commands share. The ingest and build modules
 * (DuckDB among them) are imported when a step runs: `ri serve` on a published snapshot never
 * loads them (about 10 MB of resident memory).
 */

/** The corpus store's options under the batch jobs' memory budget (BUILD_MEMORY_MB). */
const budgeted = () => storeOptions(loadConfig().BUILD_MEMORY_MB);

export async function runIngest(
  dataDir: string,
  paths: string[],
  topicsPath: string | null,
  options: { tag?: boolean } = {},
): Promise<IngestSummary> {
  const { root, corpus } = dataPaths(dataDir);
  mkdirSync(root, { recursive: true });
  let files: ReturnType<typeof expandWorksPaths>;
  try {
    files = expandWorksPaths(paths);
  } catch (e) {
    throw new CliError(
      `cannot read ${(e as NodeJS.ErrnoException).path ?? paths.join(' ')}: ${(e as Error).message}`,
    );
  }
  if (files.length === 0) throw new CliError(`no works files found in ${paths.join(' ')}`);
  const topics = topicsPath ?? (existsSync(BUNDLED_SAMPLE.topics) ? BUNDLED_SAMPLE.topics : null);
  const { openCorpusStore } = await import('../ingest/corpus-store.js');
  const { ingest } = await import('../ingest/ingest.js');
  if (topics) {
    const store = await openCorpusStore(corpus, budgeted());
    try {
      await store.loadTaxonomy(readTaxonomy(topics));
    } finally {
      store.close();
    }
  }

  const progress = ingestProgressReporter();
  const summary = await ingest(corpus, files, {
    store: budgeted(),
    onProgress: (p) => progress.update(p),
    onLog: (line) => process.stderr.write(`${line}\n`),
    onDebug: process.env.RI_VERBOSE ? (line) => process.stderr.write(`ingest: ${line}\n`) : undefined,
  });
  progress.stop();
  // `ri update` leaves the tag step to its build, which runs it first anyway (one pass, not two).
  if (options.tag !== false) summary.tagged = await runTag(dataDir);
  for (const b of summary.badLines) process.stderr.write(`ingest: ${b.file}:${b.line}: ${b.reason}\n`);
  for (const f of summary.fileErrors)
    process.stderr.write(`ingest: ${f.file}: could not be read to the end: ${f.error}\n`);
  process.stderr.write(`${formatSummary(summary)}\n`);
  return summary;
}

/**
 * The tag step (ingest -> tag -> build): tags the titles of new and changed works in the corpus
 * store (src/tagging/tag-works.ts). `ri build` runs it too, first, for what a pull left untagged.
 */
export async function runTag(dataDir: string): Promise<number> {
  const { corpus } = dataPaths(dataDir);
  const { openCorpusStore } = await import('../ingest/corpus-store.js');
  const { tagWorks } = await import('../tagging/tag-works.js');
  const started = performance.now();
  const store = await openCorpusStore(corpus, budgeted());
  try {
    const tagged = await tagWorks(store);
    if (process.env.RI_VERBOSE)
      process.stderr.write(
        `tag: ${tagged} titles in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
      );
    return tagged;
  } finally {
    store.close();
  }
}

function formatSummary(s: IngestSummary): string {
  return `ingest: ${s.files} file(s) in ${s.seconds.toFixed(1)} s: ${formatCounts(s.counts)}`;
}

/** What a merge did with the records read (the ingest and pull summaries end with it). */
export function formatCounts(c: IngestCounts): string {
  const skipped = c.skipped.retracted + c.skipped.paratext + c.skipped.malformed + c.skipped.invalid;
  return (
    `${c.read} read, ${c.kept} kept, ${c.replaced} replaced, ${c.unchanged} unchanged, ${c.removed} removed, ` +
    `${skipped} skipped (retracted ${c.skipped.retracted}, paratext ${c.skipped.paratext}, ` +
    `malformed ${c.skipped.malformed}, invalid ${c.skipped.invalid})`
  );
}

/**
 * Scores the corpus store and publishes a snapshot. The build cache (DATA_DIR/build-cache) makes
 * it incremental: only works changed since the last build are read again; `full` ignores it.
 */
export async function runBuild(dataDir: string, options: { full?: boolean } = {}) {
  const { root, corpus, snapshots } = dataPaths(dataDir);
  if (!existsSync(corpus))
    throw new CliError(`no corpus store at ${corpus}: run \`ri ingest PATH...\` first`);
  const { buildSnapshot } = await import('../snapshot-build/build-snapshot.js');
  process.stderr.write(`build: memory budget ${loadConfig().BUILD_MEMORY_MB} MB (BUILD_MEMORY_MB)\n`);
  const result = await buildSnapshot(corpus, snapshots, {
    log: (m) => process.stderr.write(`build: ${m}\n`),
    keep: loadConfig().SNAPSHOTS_KEEP,
    store: budgeted(),
    cacheFile: join(root, 'build-cache', 'corpus.bin'),
    full: options.full,
    placed: (version) => publishExports(snapshots, version),
  });
  process.stderr.write(
    `build: ${result.papers} papers, ${result.subjects} subjects in ${result.seconds.toFixed(1)} s; data_version ${result.version}` +
      `${result.repaired ? ' (rewrote a missing or damaged file)' : result.changed ? '' : ' (unchanged)'}\n`,
  );
  return result;
}

/**
 * The whole-table exports of a version being published (src/exports/), before servers switch to
 * it. A failure leaves none of its files and does not fail the build: a server writes the
 * exports of a kept version that lacks them when it starts or switches to it.
 */
async function publishExports(snapshots: string, version: string): Promise<void> {
  const { writeExports } = await import('../exports/write-exports.js');
  try {
    const { written, seconds } = await writeExports(snapshots, version);
    if (written) process.stderr.write(`build: exports written in ${seconds.toFixed(1)} s\n`);
  } catch (e) {
    process.stderr.write(
      `build: exports not written (a server writes them at its start): ${(e as Error).message}\n`,
    );
  }
}

/**
 * The embedded default: the bundled real sample, ingested and built on first start. A snapshot
 * written by an older version of the service (an older schema) is rebuilt from the corpus store,
 * and so is a damaged current one when no other good snapshot can be served meanwhile (with one,
 * the server starts at once on it and says the current one needs `ri build`). What it checks is
 * cheap at any size: a file with page checksums is checked by its header (its pages are checked
 * as they are read, and its hash runs behind once serving: see `rebuildWhenUnservable`); one
 * without is hashed.
 */
export async function ensureDefaultSnapshot(dataDir: string): Promise<void> {
  const { snapshots, corpus } = dataPaths(dataDir);
  const current = readPointerName(snapshots, 'CURRENT');
  if (current) {
    // Without a corpus store there is nothing to rebuild from: the server serves what is sound.
    if (!existsSync(corpus)) return;
    const sound = await startsSound(snapshots, current);
    // 0: its meta table cannot be read (a damaged page).
    const schema = sound ? snapshotSchemaVersion(snapshotFile(snapshots, current)) : 0;
    if (schema >= SNAPSHOT_SCHEMA_VERSION) return;
    if (schema > 0) {
      process.stderr.write(
        `serve: snapshot ${current} has schema ${schema}; rebuilding it with schema ${SNAPSHOT_SCHEMA_VERSION}\n`,
      );
    } else {
      const others = listSnapshotVersions(snapshots).filter((v) => v !== current);
      for (const v of others) if (await startsSound(snapshots, v)) return;
      process.stderr.write(
        `serve: snapshot ${current} is missing or damaged; rebuilding it from the corpus store\n`,
      );
    }
    await runBuild(dataDir);
    return;
  }
  // CURRENT names nothing (garbage, or removed) but snapshots are published: the server serves
  // the newest good one (SnapshotManager). The bundled sample is for a first start only: built
  // here, it would be ingested into this corpus store.
  const published = listSnapshotVersions(snapshots);
  if (published.length > 0) {
    for (const v of published) if (await startsSound(snapshots, v)) return;
    if (existsSync(corpus)) {
      process.stderr.write(
        'serve: the CURRENT pointer names no snapshot and none published verifies; rebuilding from the corpus store\n',
      );
      await runBuild(dataDir);
      return;
    }
  }
  process.stderr.write(
    'serve: no snapshot yet; building one from the bundled real sample (first start only)\n',
  );
  await runIngest(dataDir, BUNDLED_SAMPLE.works, BUNDLED_SAMPLE.topics);
  await runBuild(dataDir);
}

/**
 * The second half of `ensureDefaultSnapshot`, for what it leaves to the server: a snapshot with
 * page checksums is served without being hashed first, so when its hash behind (or a page read
 * meanwhile) finds the current one damaged and no other good snapshot can be served, it is rebuilt
 * from the corpus store here, as it would have been before the start. Returns what ends this once
 * the start's checks are done: damage found later waits for `ri build`, as it always has (a
 * rebuild of its own would race the operator's). A server without a corpus store (a replica)
 * never rebuilds.
 */
export function rebuildWhenUnservable(
  dataDir: string,
  snapshots: SnapshotManager,
  warn: (msg: string) => void,
): () => void {
  const { corpus } = dataPaths(dataDir);
  let armed = true;
  let building = false;
  snapshots.onUnservable(() => {
    if (!armed || building || !existsSync(corpus)) return;
    building = true;
    warn('no published snapshot can be served; rebuilding the current one from the corpus store');
    runBuild(dataDir)
      .then(() => snapshots.refresh())
      .catch((e: Error) => warn(`the rebuild failed: ${e.message}`))
      .finally(() => {
        building = false;
      });
  });
  return () => {
    armed = false;
  };
}

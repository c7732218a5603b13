import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CorpusStore, type MergeCounts, openCorpusStore, type StoreOptions } from './corpus-store.js';
import { type BadLine, normaliseFile } from './normalise.js';
import type { WorksFile } from './sources.js';

/** What an ingest did. Every line read is accounted for in exactly one count. */
export interface IngestCounts {
  read: number;
  kept: number;
  replaced: number;
  unchanged: number;
  removed: number;
  skipped: { retracted: number; paratext: number; malformed: number; invalid: number };
}

export interface IngestSummary {
  files: number;
  counts: IngestCounts;
  badLines: BadLine[];
  fileErrors: { file: string; error: string }[];
  /** Titles tagged with elements after this ingest: 0 here; the tag step that follows fills it in. */
  tagged: number;
  seconds: number;
}

export interface IngestProgress {
  bytes: number;
  totalBytes: number;
  read: number;
  filesDone: number;
  files: number;
}

export interface IngestOptions {
  /**
   * Files read together in one DuckDB pass (one thread each). Each pass ends in a merge and a
   * commit of about a second whatever its size, so fewer, larger passes are cheaper: 8 parts of
   * 100 MB of gzip stage about 750 MB, within the store's 1 GB memory limit.
   */
  filesPerPass?: number;
  /** The corpus store's options (its memory limit: config/memory-budget.ts). */
  store?: StoreOptions;
  onProgress?: (p: IngestProgress) => void;
  onLog?: (line: string) => void;
  /** Timings of each pass, for `--verbose` and the benchmark. */
  onDebug?: (line: string) => void;
}

/** Counts of nothing read yet (ingest and pull add to them). */
export function emptyCounts(): IngestCounts {
  return {
    read: 0,
    kept: 0,
    replaced: 0,
    unchanged: 0,
    removed: 0,
    skipped: { retracted: 0, paratext: 0, malformed: 0, invalid: 0 },
  };
}

function add(into: IngestCounts, m: MergeCounts): void {
  into.read += m.read;
  into.kept += m.kept;
  into.replaced += m.replaced;
  into.unchanged += m.unchanged;
  into.removed += m.removed;
  into.skipped.retracted += m.retracted;
  into.skipped.paratext += m.paratext;
  into.skipped.invalid += m.invalid;
}

/** Adds one run's counts to a total (a pull adds its batches' ingests up). */
export function addCounts(into: IngestCounts, c: IngestCounts): void {
  into.read += c.read;
  into.kept += c.kept;
  into.replaced += c.replaced;
  into.unchanged += c.unchanged;
  into.removed += c.removed;
  for (const k of Object.keys(into.skipped) as (keyof IngestCounts['skipped'])[])
    into.skipped[k] += c.skipped[k];
}

/**
 * Ingests works files into the corpus store at storePath. Files go through DuckDB's JSON reader
 * a few at a time (the fast path); a file it cannot read whole goes line by line instead, so
 * that every bad line is reported with its number and the good ones are still kept. Titles are
 * not tagged here: that is the tag step that follows (src/tagging/tag-works.ts).
 */
export async function ingest(
  storePath: string,
  files: readonly WorksFile[],
  options: IngestOptions = {},
): Promise<IngestSummary> {
  const started = performance.now();
  const log = options.onLog ?? (() => {});
  const store = await openCorpusStore(storePath, options.store);
  const summary: IngestSummary = {
    files: files.length,
    counts: emptyCounts(),
    badLines: [],
    fileErrors: [],
    tagged: 0,
    seconds: 0,
  };
  const totalBytes = files.reduce((s, f) => s + f.bytes, 0);
  let bytes = 0;
  let filesDone = 0;
  const done = (group: readonly WorksFile[]) => {
    bytes += group.reduce((s, f) => s + f.bytes, 0);
    filesDone += group.length;
    options.onProgress?.({ bytes, totalBytes, read: summary.counts.read, filesDone, files: files.length });
  };

  try {
    const perPass = Math.max(1, options.filesPerPass ?? 8);
    options.onProgress?.({ bytes, totalBytes, read: 0, filesDone, files: files.length });
    for (let i = 0; i < files.length; i += perPass) {
      const group = files.slice(i, i + perPass);
      const t = performance.now();
      await ingestGroup(store, group, summary, log);
      done(group);
      options.onDebug?.(
        `pass ${i / perPass + 1}: ${group.length} file(s) in ${((performance.now() - t) / 1000).toFixed(1)} s`,
      );
    }
  } finally {
    store.close();
  }
  summary.seconds = (performance.now() - started) / 1000;
  return summary;
}

async function ingestGroup(
  store: CorpusStore,
  group: readonly WorksFile[],
  summary: IngestSummary,
  log: (l: string) => void,
) {
  try {
    const { counts, invalidFiles } = await store.mergeFiles(group.map((f) => f.path));
    add(summary.counts, counts);
    for (const file of invalidFiles) await ingestLineByLine(store, file, summary, log);
    return;
  } catch (e) {
    if (group.length > 1) {
      // One file of the pass is unreadable as a whole: find which, one file at a time.
      for (const f of group) await ingestGroup(store, [f], summary, log);
      return;
    }
    log(`ingest: ${group[0]!.path}: ${(e as Error).message.split('\n')[0]}; reading it line by line`);
  }
  await ingestLineByLine(store, group[0]!.path, summary, log);
}

async function ingestLineByLine(
  store: CorpusStore,
  file: string,
  summary: IngestSummary,
  log: (l: string) => void,
) {
  const tmp = join(tmpdir(), `ri-normalised-${process.pid}-${Date.now()}.jsonl`);
  try {
    const r = await normaliseFile(file, tmp);
    summary.counts.read += r.malformed + r.invalid;
    summary.counts.skipped.malformed += r.malformed;
    summary.counts.skipped.invalid += r.invalid;
    for (const b of r.badLines) if (summary.badLines.length < 100) summary.badLines.push(b);
    if (r.error) summary.fileErrors.push({ file, error: r.error });
    add(summary.counts, await store.mergeNormalised(tmp));
    log(
      `ingest: ${file}: ${r.malformed} malformed and ${r.invalid} invalid line(s) skipped${r.error ? `; stopped early: ${r.error}` : ''}`,
    );
  } finally {
    rmSync(tmp, { force: true });
  }
}

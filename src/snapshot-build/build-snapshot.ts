import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { type CorpusStore, openCorpusStore, type StoreOptions } from '../ingest/corpus-store.js';
import { assignClusters, citationVotes } from '../scoring/clusters.js';
import { type CachedCorpus, loadCorpusReporting } from '../scoring/corpus.js';
import { readCorpusCache, writeCorpusCache } from '../scoring/corpus-cache.js';
import { isoDay } from '../scoring/dates.js';
import { computeImpact } from '../scoring/impact.js';
import { DEFAULT_PARAMETERS, type ScoringParameters } from '../scoring/parameters.js';
import { snapshotFile } from '../snapshot/folder.js';
import { verifySnapshot } from '../snapshot/integrity.js';
import { SNAPSHOT_SCHEMA_VERSION } from '../snapshot/schema.js';
import { tagWorks } from '../tagging/tag-works.js';
import { TAGGER_VERSION } from '../tagging/tagger.js';
import { writeFileAtomically } from '../util/atomic-file.js';
import { releaseFreeMemory } from '../util/release-memory.js';
import { changesBases } from './changes.js';
import type { PaperContent } from './paper-rows.js';
import { type PublishResult, publishSnapshot } from './publish.js';
import { type StagedRefs, stageRefs, stageRefsFrom } from './refs-columns.js';
import { scoreCommunityRows, scoreSubjectsAside } from './score-subjects.js';
import { type SubjectContent, writeSnapshot } from './write-snapshot.js';

export interface BuildResult extends PublishResult {
  papers: number;
  /** Titles the tag step tagged first (works ingested but not yet tagged). */
  tagged: number;
  /** True when the corpus was loaded from the build cache plus the changed works. */
  incremental: boolean;
  subjects: number;
  seconds: number;
  file: string;
}

/**
 * `ri build`: reads the corpus store, scores every element, topic and keyword, writes a new
 * snapshot file beside the published ones and publishes it atomically.
 */
export async function buildSnapshot(
  corpusPath: string,
  snapshotDir: string,
  options: {
    params?: ScoringParameters;
    log?: (msg: string) => void;
    /** Published snapshots to keep (SNAPSHOTS_KEEP); the default 5. */
    keep?: number;
    /**
     * The build cache file (src/scoring/corpus-cache.ts): read when it can be brought up to date,
     * written after every load. Without it, every build loads the corpus in full.
     */
    cacheFile?: string;
    /** Load in full even when the cache could be used (the cache is still written). */
    full?: boolean;
    /** False: the file without page checksums, as builds before them wrote it (write-snapshot.ts). */
    pageChecksums?: boolean;
    /** The corpus store's options (its memory limit: config/memory-budget.ts). */
    store?: StoreOptions;
    /** What is written beside the published file before servers switch to it (publish.ts). */
    placed?: (version: string) => Promise<void>;
  } = {},
): Promise<BuildResult> {
  const started = performance.now();
  const params = options.params ?? DEFAULT_PARAMETERS;
  const log = options.log ?? (() => {});
  const store = await openCorpusStore(corpusPath, options.store);
  try {
    return await buildFromStore(store, snapshotDir, params, log, started, options);
  } finally {
    store.close();
  }
}

async function buildFromStore(
  store: CorpusStore,
  snapshotDir: string,
  params: ScoringParameters,
  log: (msg: string) => void,
  started: number,
  options: {
    keep?: number;
    cacheFile?: string;
    full?: boolean;
    pageChecksums?: boolean;
    placed?: (version: string) => Promise<void>;
  },
): Promise<BuildResult> {
  const lap = (what: string) => log(`${what} (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  const keep = options.keep;
  log(`DuckDB's memory limit ${await store.scalar<string>("SELECT current_setting('memory_limit')")}`);
  // The pipeline is ingest -> tag -> build; a build tags what an ingest or pull left untagged.
  const tagged = await tagWorks(store);
  if (tagged > 0) lap(`tagged ${tagged} titles`);
  const state = await store.state();
  // The build cache, read and checked (its digest: about 0.15 s for 147 MB at 1M works) while the
  // load's first query orders the corpus; then the snapshot built with it, whose paper rows the
  // writer copies for unchanged works once its bytes are checked against its name (hashed in a
  // thread of its own while the corpus loads).
  const found = {
    generation: null as number | null,
    digest: null as string | null,
    previousVersion: null as string | null,
    previousChecked: Promise.resolve(false),
  };
  const readCache = (): CachedCorpus | null => {
    if (!options.cacheFile) return null;
    const read = options.full
      ? { cache: null, reason: 'a full build was asked for' }
      : readCorpusCache(options.cacheFile, state, params);
    if (!read.cache) {
      log(`loading in full: ${read.reason}`);
      return null;
    }
    found.generation = read.cache.generation;
    found.digest = read.cache.digest;
    found.previousVersion = readCacheSnapshot(options.cacheFile, read.cache.digest);
    if (found.previousVersion) found.previousChecked = verifySnapshot(snapshotDir, found.previousVersion);
    return read.cache;
  };
  const { corpus, report } = await loadCorpusReporting(store, params, readCache, (step) =>
    lap(`  loading: ${step}`),
  );
  if (found.digest && !report.incremental)
    log(`loading in full: the build cache does not match the change log (${report.mismatch ?? 'unknown'})`);
  // A cache of this very generation, used as it is, need not be written again.
  const cacheIsCurrent = report.incremental && found.generation === state.generation;
  const { digest: cacheDigest, previousVersion, previousChecked } = found;
  if (corpus.n === 0) throw new Error('the corpus store has no works: run `ri ingest PATH...` first');
  lap(
    `loaded ${corpus.n} works${report.incremental ? ` (incremental: ${report.changed} changed since the build cache)` : ''}, cut-off ${isoDay(corpus.cutoffDay)}`,
  );
  const cacheFile = options.cacheFile && !cacheIsCurrent ? options.cacheFile : null;

  mkdirSync(snapshotDir, { recursive: true });
  // The published snapshots the changes are computed against (changes.ts), checked meanwhile.
  const bases = changesBases(snapshotDir);
  bases.catch(() => {}); // awaited by the writer
  const tmp = join(snapshotDir, `.build-${process.pid}-${Date.now()}.sqlite`);
  const previousFile = (async () =>
    report.cachedOrdinal && previousVersion && (await previousChecked)
      ? snapshotFile(snapshotDir, previousVersion)
      : null)();
  // DuckDB's cache of the corpus's blocks let go before the scoring (read again by the next query).
  await store.releaseCache();
  const impact = computeImpact(corpus, params);
  lap('impact scores');
  // The subjects are scored in a worker thread while this one writes their rows as they come.
  const scoring = scoreSubjectsAside(corpus, impact, params);
  // The references' staging, once begun (awaited in `finally` when the build fails).
  const refs: { staging?: Promise<StagedRefs> } = {};
  try {
    // The build cache holds what was loaded: written now (on the I/O threads) while the build goes
    // on, so the end of the build waits for the snapshot's hash alone; from the columns as shared
    // with the scoring worker (not the copies they were made from, which would stay in memory).
    // It only makes the next build faster: when it cannot be written the snapshot is still
    // published, the old cache stays whole (written to a temporary, then renamed) and the change
    // log is kept (pruned only once both are done), so the next build is still right; a warning
    // says why it will be slower.
    const cacheWritten: Promise<string | null> = cacheFile
      ? writeCorpusCache(cacheFile, corpus, state, params).then(
          (digest) => {
            lap('build cache written');
            return digest;
          },
          (e: Error) => {
            log(`build cache not written (${e.message}): the next build loads more from the store`);
            return null;
          },
        )
      : Promise.resolve(cacheIsCurrent ? cacheDigest : null);
    const subjects = scoring.result.then((s): SubjectContent => {
      lap(`scored ${s.count} subjects (scoring took ${s.seconds.toFixed(1)} s)`);
      return {
        ...s,
        meta: {
          schema_version: SNAPSHOT_SCHEMA_VERSION,
          tagger_version: TAGGER_VERSION,
          cutoff_date: isoDay(corpus.cutoffDay),
          window_start: isoDay(s.window.startDay + 1),
          window_end: isoDay(s.window.endDay),
          window_papers: s.window.papers,
          window_high_impact_papers: s.window.highImpactPapers,
          corpus_papers: corpus.n,
          papers_with_citations: corpus.citations.reduce((sum, c) => sum + (c >= 0 ? 1 : 0), 0),
          citation_curves: JSON.stringify(
            Object.fromEntries([...impact.curves].map(([f, c]) => [String(f), c.source])),
          ),
          parameters: JSON.stringify(params),
        },
      };
    });
    subjects.catch(() => {}); // awaited by the writer; a failure before then is the writer's to report
    // What the paper rows and columns are written from, asked for by the writer once the subjects'
    // rows are written and the scoring worker is gone: the references are staged then, by DuckDB
    // alone, not beside the scoring (at 10M works the two together were the build's peak).
    // An incremental build brings those of the snapshot built with the cache up to date, once that
    // file's bytes are checked against its name; else DuckDB reads them all again.
    const papers = async (): Promise<PaperContent> => {
      releaseFreeMemory(); // what the scoring worker's thread kept, given back before the references
      await fitStore('the citation votes and the references');
      // The citation graph's votes for the papers without a topic: DuckDB's joins, not beside the
      // scoring either.
      const clusters = assignClusters(corpus.primaryTopic, await citationVotes(store));
      lap('  citation votes read');
      refs.staging = stageReferences();
      const stagedRefs = await refs.staging;
      lap('references staged');
      await fitStore('the paper rows');
      let previous: PaperContent['previous'];
      if (report.cachedOrdinal && previousVersion) {
        const file = await previousFile;
        if (file) previous = { file, ordinal: report.cachedOrdinal };
        else
          log(
            `paper rows made in full: the snapshot ${previousVersion} built with the cache is gone or damaged`,
          );
      }
      return { corpus, impact, clusters, previous, refs: stagedRefs };
    };
    // DuckDB's limit for what it sorts and joins next, beside the columns the build holds.
    const fitStore = async (what: string) => {
      const mb = await store.fitToBudget();
      if (mb !== null) log(`DuckDB's memory limit ${mb} MB for ${what}`);
    };
    const stageReferences = async (): Promise<StagedRefs> => {
      const snapshot = await previousFile;
      const { cachedOrdinal, refsDelta } = report;
      if (!snapshot || !cachedOrdinal || !refsDelta) return stageRefs(store, corpus.n, `${tmp}-refs`);
      const staged = await stageRefsFrom(store, corpus.n, `${tmp}-refs`, {
        snapshot,
        cachedOrdinal,
        workId: corpus.workId,
        delta: refsDelta,
        onFreshRead: (pairs) => lap(`  references read again: ${pairs} pairs`),
      });
      if (staged) {
        lap(
          `  references of ${previousVersion} brought up to date (${refsDelta.changedIds.length} works read again)`,
        );
        return staged;
      }
      log(`references read in full: the snapshot ${previousVersion} is not the one built with the cache`);
      return stageRefs(store, corpus.n, `${tmp}-refs`);
    };
    // The communities on the writer's thread while the worker still scores the subjects.
    const communities = () => scoreCommunityRows(corpus, params);
    await writeSnapshot(
      tmp,
      papers,
      { corpus, communities, rows: scoring.rows, scores: subjects },
      store,
      lap,
      { pageChecksums: options.pageChecksums, changesBases: bases },
    );
    lap('snapshot written');
    // Published as soon as the file is written (servers switch to it then); the build cache, still
    // being written on the I/O threads, is awaited after (it never fails the build: see above).
    let published: PublishResult;
    try {
      published = await publishSnapshot(snapshotDir, tmp, {
        ...(keep === undefined ? {} : { keep }),
        ...(options.placed ? { placed: options.placed } : {}),
      });
    } catch (e) {
      await cacheWritten; // not left running behind a failed build
      throw e;
    }
    lap(
      published.changed
        ? `published ${published.version}`
        : published.repaired
          ? `rewrote the missing or damaged file of ${published.version} (current)`
          : `unchanged: ${published.version} is already current`,
    );
    const written = await cacheWritten;
    if (cacheFile && written) await store.pruneChanges(state.generation);
    if (options.cacheFile && written) {
      try {
        writeCacheSnapshot(options.cacheFile, written, published.version);
      } catch (e) {
        log(
          `the build cache's snapshot not recorded (${(e as Error).message}): the next build makes every paper row`,
        );
      }
    }
    return {
      ...published,
      papers: corpus.n,
      tagged,
      incremental: report.incremental,
      subjects: (await scoring.result).count,
      seconds: (performance.now() - started) / 1000,
      file: join(snapshotDir, `${published.version}.sqlite`),
    };
  } finally {
    scoring.stop();
    await refs.staging?.catch(() => {}); // not left reading the store once it is closed
    rmSync(tmp, { force: true });
    rmSync(`${tmp}-refs`, { force: true });
  }
}

/**
 * Beside the cache, the data_version of the snapshot built with it, whose paper rows are in the
 * cache's ordinal order: the next incremental build copies the rows of unchanged works from it.
 * It names the cache by digest, so a cache written without it (a build stopped between the two)
 * is never taken for the one it names.
 */
function writeCacheSnapshot(file: string, digest: string, version: string): void {
  writeFileAtomically(
    dirname(file),
    `${basename(file)}.snapshot`,
    JSON.stringify({ cache: digest, version }),
  );
}

/** The snapshot built with this cache (its digest), when one is recorded. */
function readCacheSnapshot(file: string, digest: string): string | null {
  try {
    const link = JSON.parse(readFileSync(`${file}.snapshot`, 'utf8')) as {
      cache?: unknown;
      version?: unknown;
    };
    return link.cache === digest && typeof link.version === 'string' ? link.version : null;
  } catch {
    return null;
  }
}

import { closeSync, mkdirSync, openSync, rmSync, writevSync } from 'node:fs';
import { join } from 'node:path';
import { OPENALEX_COLUMNS } from './corpus-store.js';
import { addCounts, emptyCounts, type IngestCounts, ingest } from './ingest.js';
import { type OpenAlexClient, OpenAlexError } from './openalex-client.js';
import { type PullState, readPullState, writePullState } from './openalex-state.js';

/**
 * `ri pull`: new and changed works from the OpenAlex API, cursor page by cursor page, into the
 * corpus store through the same ingest as files (the pages are written as JSON lines and handed
 * to ingest), so a corpus is the same whether it was read from files or pulled. Pages are merged
 * a batch at a time while the next batch downloads; the cursor is saved after each merge, so an
 * interrupted pull goes on from its last merged page (a page merged twice changes nothing).
 */

/** The top-level fields ingest reads: the `select` of every request. */
export const PULL_SELECT: readonly string[] = [...OPENALEX_COLUMNS.matchAll(/(\w+): '/g)].map((m) => m[1]!);

export const PER_PAGE = 200;

/**
 * Pages merged at a time, at least. Each merge has a cost besides its records (opening the store,
 * matching against what it holds, the checkpoint): 100,000 works merged as 40,000 then 60,000
 * took 5.2 s of CPU against 4.1 s as one, so a batch holds 100,000 works (about 0.5 GB of JSON
 * lines on disk). An interrupted pull reads again the pages after its last merge: about a batch.
 */
export const PAGES_PER_BATCH = 500;

export interface PullOptions {
  /** from_updated_date for this pull; default: where the last pull ended. */
  since?: string | null;
  /** An OpenAlex filter added to from_updated_date; undefined: the stored one; '' or null: none. */
  filter?: string | null;
  /** Pages a batch holds at least before it is merged (default 500: 100,000 works); see the loop. */
  pagesPerBatch?: number;
  onProgress?: (p: PullProgress) => void;
  onLog?: (line: string) => void;
  /** Timings of each merge, for `RI_VERBOSE` and the benchmark. */
  onDebug?: (line: string) => void;
  /** Aborting stops after the page being read; what was read is merged and the cursor kept. */
  signal?: AbortSignal;
}

interface PullProgress {
  pages: number;
  records: number;
  /** How many works the query matches (meta.count), once known. */
  total: number | null;
}

export interface PullSummary {
  since: string;
  filter: string | null;
  resumed: boolean;
  /** The pull read to the end of the list. */
  complete: boolean;
  /** Pages read in this run. */
  pages: number;
  counts: IngestCounts;
  badRecords: { page: number; record: number; reason: string }[];
  tagged: number;
  seconds: number;
  /** Where the next pull starts (when complete). */
  nextSince: string | null;
}

/** The pull stopped before the end of the list; what it read is merged and the cursor kept. */
export class PullStoppedError extends Error {
  constructor(
    message: string,
    readonly summary: PullSummary,
  ) {
    super(message);
  }
}

/** A request the pull cannot start (no --since on a first pull). */
export class PullUsageError extends Error {}

/** Writes buffers in order, up to 1,024 (the iovec limit) a system call. */
function writeLines(fd: number, chunks: Buffer[]): void {
  for (let i = 0; i < chunks.length; i += 1024) {
    const part = chunks.slice(i, i + 1024);
    const size = part.reduce((n, c) => n + c.length, 0);
    const written = writevSync(fd, part);
    if (written !== size) throw new Error(`short write to a pull batch file (${written} of ${size} bytes)`);
  }
}

/** One batch of pages on its way to ingest: a JSON-lines file and where each page starts in it. */
interface Batch {
  path: string;
  fd: number;
  closed: boolean;
  bytes: number;
  lines: number;
  pages: { page: number; firstLine: number }[];
  maxUpdatedDate: string;
}

export async function pull(
  client: OpenAlexClient,
  corpusPath: string,
  pullDir: string,
  options: PullOptions = {},
): Promise<PullSummary> {
  const started = performance.now();
  const log = options.onLog ?? (() => {});
  const statePath = join(pullDir, 'state.json');
  mkdirSync(pullDir, { recursive: true });
  const stored = readPullState(statePath);
  const wantedFilter = options.filter === undefined ? undefined : options.filter || null;

  const resumable =
    stored !== null &&
    stored.cursor !== null &&
    stored.api_url === client.baseUrl &&
    (options.since == null || options.since === stored.since) &&
    (wantedFilter === undefined || wantedFilter === stored.filter);
  let state: PullState;
  if (resumable) {
    state = stored;
    log(
      `pull: resuming the interrupted pull of works updated since ${state.since} after ${state.pages} page(s)`,
    );
  } else {
    const since = options.since ?? stored?.next_since ?? null;
    if (since === null) {
      throw new PullUsageError('no earlier pull in this DATA_DIR: give --since DATE for the first one');
    }
    if (stored?.cursor && stored.pages > 0)
      log(`pull: an interrupted pull of works updated since ${stored.since} is dropped`);
    state = {
      api_url: client.baseUrl,
      filter: wantedFilter === undefined ? (stored?.filter ?? null) : wantedFilter,
      since,
      cursor: '*',
      pages: 0,
      records: 0,
      max_updated_date: '',
      next_since: stored?.next_since ?? null,
      completed_at: null,
    };
    // Written with the first merged batch: a pull that read nothing leaves the stored state as it was.
  }

  const summary: PullSummary = {
    since: state.since,
    filter: state.filter,
    resumed: resumable,
    complete: false,
    pages: 0,
    counts: emptyCounts(),
    badRecords: [],
    tagged: 0,
    seconds: 0,
    nextSince: null,
  };
  const filter = `from_updated_date:${state.since}${state.filter ? `,${state.filter}` : ''}`;
  const perBatch = Math.max(1, options.pagesPerBatch ?? PAGES_PER_BATCH);
  let batchNumber = 0;
  const newBatch = (): Batch => {
    const path = join(pullDir, `batch-${process.pid}-${++batchNumber}.jsonl`);
    return {
      path,
      fd: openSync(path, 'w'),
      closed: false,
      bytes: 0,
      lines: 0,
      pages: [],
      maxUpdatedDate: '',
    };
  };

  /** Merges a batch, then records the cursor after it (null: the list is done). */
  const close = (b: Batch) => {
    if (!b.closed) closeSync(b.fd);
    b.closed = true;
  };
  const merge = async (batch: Batch, cursorAfter: string | null) => {
    close(batch);
    const t = performance.now();
    try {
      if (batch.lines > 0) {
        const r = await ingest(corpusPath, [{ path: batch.path, bytes: batch.bytes, partitionDate: null }], {
          onLog: (line) => log(line.replaceAll(batch.path, 'pulled page')),
        });
        addCounts(summary.counts, r.counts);
        summary.tagged += r.tagged;
        for (const b of r.badLines) {
          const at = batch.pages.findLast((p) => p.firstLine <= b.line) ?? batch.pages[0]!;
          summary.badRecords.push({ page: at.page, record: b.line - at.firstLine + 1, reason: b.reason });
        }
        for (const f of r.fileErrors) log(`pull: a batch of pages could not be read to the end: ${f.error}`);
      }
    } finally {
      rmSync(batch.path, { force: true });
    }
    options.onDebug?.(
      `merged ${batch.pages.length} page(s), ${batch.lines} works in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    state.cursor = cursorAfter;
    state.pages += batch.pages.length;
    state.records += batch.lines;
    if (batch.maxUpdatedDate > state.max_updated_date) state.max_updated_date = batch.maxUpdatedDate;
    if (cursorAfter === null) {
      state.next_since = state.max_updated_date || state.since;
      state.completed_at = new Date().toISOString();
      summary.complete = true;
      summary.nextSince = state.next_since;
    }
    writePullState(statePath, state);
  };

  let cursor = state.cursor!;
  let batch = newBatch();
  let merging: Promise<void> | null = null;
  let mergeBusy = false;
  let failure: Error | null = null;
  let total: number | null = null;
  let records = state.records;
  const pagesBefore = state.pages;
  try {
    for (;;) {
      if (options.signal?.aborted) {
        failure = new Error('interrupted');
        break;
      }
      let page: Awaited<ReturnType<OpenAlexClient['worksPage']>>;
      try {
        page = await client.worksPage({ filter, select: PULL_SELECT, cursor, perPage: PER_PAGE });
      } catch (e) {
        if (!(e instanceof OpenAlexError)) throw e;
        failure = e;
        break;
      }
      summary.pages++;
      batch.pages.push({ page: pagesBefore + summary.pages, firstLine: batch.lines + 1 });
      writeLines(batch.fd, page.lines);
      batch.bytes += page.bytes;
      batch.lines += page.records;
      if (page.maxUpdatedDate > batch.maxUpdatedDate) batch.maxUpdatedDate = page.maxUpdatedDate;
      total = page.count ?? total;
      records += page.records;
      options.onProgress?.({ pages: pagesBefore + summary.pages, records, total });

      const done = page.nextCursor === null || page.records === 0;
      if (!done) cursor = page.nextCursor!;
      // A batch goes to ingest once it has perBatch pages and the last merge is over (while it is
      // not, pages keep coming: each merge has a fixed cost, so fewer, larger ones when the API
      // is fast); at four times that, reading waits for the merge.
      const full = batch.pages.length >= perBatch && (!mergeBusy || batch.pages.length >= perBatch * 4);
      if (done || full) {
        await merging;
        mergeBusy = true;
        merging = merge(batch, done ? null : cursor).finally(() => {
          mergeBusy = false;
        });
        batch = newBatch();
      }
      if (done) break;
    }
    await merging;
    merging = null;
    // Stopped early: what was read is merged, and the cursor after it kept.
    if (batch.pages.length > 0) await merge(batch, cursor);
  } finally {
    if (merging) await merging.catch(() => {});
    close(batch);
    rmSync(batch.path, { force: true });
  }
  summary.seconds = (performance.now() - started) / 1000;
  if (failure) {
    throw new PullStoppedError(failure.message, summary);
  }
  return summary;
}

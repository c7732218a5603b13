/**
 * Writes a synthetic OpenAlex corpus in the snapshot layout:
 *   OUT/works/updated_date=YYYY-MM-DD/part_000.gz (gzip JSON lines, one work per line)
 *
 * The plan (which works go to which partition and part) and every record depend only on (seed, works),
 * and each part file is written by one worker from its own spec, so the bytes never depend on
 * scheduling or on the number of workers.
 */
import { once } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createGzip, constants as zlibConstants } from 'node:zlib';
import { ByteWriter } from './byte-writer.js';
import { mix, Rng } from './random.js';
import {
  type BuildOptions,
  type Corpus,
  createCorpus,
  type SharedCorpus,
  shareCorpus,
  type TopicInput,
  writeWork,
} from './records.js';

/** At most this many works per part file. */
const MAX_WORKS_PER_PART = 50_000;
/** Share of works that re-appear in a later partition with more citations. */
const UPDATE_SHARE = 0.02;
/** The first partition date; later ones follow every few days. */
const FIRST_PARTITION_DAY = Date.UTC(2025, 10, 6); // 2025-11-06
const SALT_PLAN = 21;
const SALT_UPDATE = 22;

export interface PartSpec {
  /** Position in the plan (stable, used for ordering and progress). */
  index: number;
  /** Partition date, YYYY-MM-DD. */
  day: string;
  /** Relative path under OUT: works/updated_date=DAY/part_NNN.gz */
  path: string;
  /** New works of this partition: indices [start, end). */
  start: number;
  end: number;
  /** Re-appearing works (first written in an earlier partition). */
  updates: number[];
  /** Partition date of each update's first appearance (aligned with updates). */
  updateFirstDays: string[];
}

export interface CorpusPlan {
  works: number;
  seed: number;
  days: string[];
  /** Number of new works per partition. */
  partitionSizes: number[];
  parts: PartSpec[];
  /** Total lines written (works + re-appearances). */
  lines: number;
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Number of updated_date partitions for a corpus of n works (10..30). */
function partitionCount(works: number): number {
  return Math.max(1, Math.min(works, Math.min(30, Math.max(10, Math.ceil(works / 40_000)))));
}

/** Decide partitions, their dates, the re-appearing works and the part files. Deterministic. */
export function planCorpus(works: number, seed: number, maxPerPart = MAX_WORKS_PER_PART): CorpusPlan {
  if (!Number.isInteger(works) || works < 1) throw new Error('works must be a positive integer');
  const rng = new Rng(mix(seed, SALT_PLAN));
  const k = partitionCount(works);
  const days: string[] = [];
  let ms = FIRST_PARTITION_DAY;
  for (let p = 0; p < k; p++) {
    days.push(isoDay(ms));
    ms += (2 + (rng.nextU32() % 6)) * 86_400_000;
  }
  // The first partition is the big one (a full re-snapshot); later ones are smaller and uneven.
  const weights = [k === 1 ? 1 : 0.3];
  for (let p = 1; p < k; p++) weights.push((0.7 / (k - 1)) * (0.5 + rng.next()));
  const total = weights.reduce((a, b) => a + b, 0);
  const bounds = [0];
  let acc = 0;
  for (let p = 0; p < k; p++) {
    acc += weights[p]! / total;
    bounds.push(
      p === k - 1 ? works : Math.max(bounds[p]! + 1, Math.min(works - (k - 1 - p), Math.round(acc * works))),
    );
  }
  const partitionSizes = days.map((_d, p) => bounds[p + 1]! - bounds[p]!);

  // Re-appearances: ~2% of works show up again in a strictly later partition.
  const updates: number[][] = days.map(() => []);
  const updateFirst: string[][] = days.map(() => []);
  for (let p = 0; p < k - 1; p++) {
    for (let i = bounds[p]!; i < bounds[p + 1]!; i++) {
      const h = mix(seed, i, SALT_UPDATE);
      if (h / 4294967296 >= UPDATE_SHARE) continue;
      const target = p + 1 + (mix(h, 1) % (k - 1 - p));
      updates[target]!.push(i);
      updateFirst[target]!.push(days[p]!);
    }
  }

  const parts: PartSpec[] = [];
  let lines = 0;
  for (let p = 0; p < k; p++) {
    const start = bounds[p]!;
    const end = bounds[p + 1]!;
    const ups = updates[p]!;
    const count = end - start + ups.length;
    lines += count;
    const nParts = Math.max(1, Math.ceil(count / maxPerPart));
    const per = Math.ceil(count / nParts);
    for (let q = 0; q < nParts; q++) {
      // item positions [a, b) over the sequence: new works first, then re-appearances
      const a = q * per;
      const b = Math.min(count, a + per);
      const newCount = end - start;
      const s = start + Math.min(a, newCount);
      const e = start + Math.min(b, newCount);
      const ua = Math.max(0, a - newCount);
      const ub = Math.max(0, b - newCount);
      parts.push({
        index: parts.length,
        day: days[p]!,
        path: `works/updated_date=${days[p]}/part_${String(q).padStart(3, '0')}.gz`,
        start: s,
        end: e,
        updates: ups.slice(ua, ub),
        updateFirstDays: updateFirst[p]!.slice(ua, ub),
      });
    }
  }
  return { works, seed, days, partitionSizes, parts, lines };
}

export interface PartResult {
  index: number;
  path: string;
  works: number;
  /** Uncompressed JSON bytes. */
  rawBytes: number;
  /** Gzip file size. */
  bytes: number;
}

/** Gzip options: fixed, level 1 (the bytes only depend on input and the zlib version). */
const GZIP_OPTIONS = { level: 1, memLevel: 8, windowBits: 15, strategy: zlibConstants.Z_DEFAULT_STRATEGY };
const FLUSH_BYTES = 512 << 10;
const MAX_RECORD_BYTES = 256 << 10;
const BUFFER_BYTES = FLUSH_BYTES + MAX_RECORD_BYTES;
/**
 * Chunks handed to gzip and not yet compressed: with two, the records of the next chunk are built while
 * gzip (on libuv's pool) compresses the last one. How the input and output are cut does not change the
 * bytes (nothing is flushed before the end), so neither this nor gzip's chunkSize does.
 */
const CHUNKS_IN_FLIGHT = 2;
const GZIP_CHUNK_BYTES = 256 << 10;

/** Write one part file (atomically: a hidden temp file renamed into place). */
export async function writePart(corpus: Corpus, outDir: string, spec: PartSpec): Promise<PartResult> {
  const target = join(outDir, spec.path);
  await mkdir(dirname(target), { recursive: true });
  const temp = join(dirname(target), `.${spec.path.split('/').pop()}.tmp`);
  // gzip.write's answer is not waited for: the flow control is the count of chunks in flight
  const gzip = createGzip({ ...GZIP_OPTIONS, chunkSize: GZIP_CHUNK_BYTES });
  const file = createWriteStream(temp);
  gzip.pipe(file);
  const closed = once(file, 'close');
  let rawBytes = 0;
  // Records are written straight into a buffer as UTF-8, handed to gzip when full; a buffer gzip has
  // consumed is used again.
  const spare: Uint8Array[] = [];
  const out = new ByteWriter(BUFFER_BYTES);
  let inFlight = 0;
  let failure: Error | null = null;
  let wake: (() => void) | null = null;
  const flush = async (): Promise<void> => {
    rawBytes += out.length;
    const full = out.bytes;
    inFlight++;
    gzip.write(full.subarray(0, out.length), (error) => {
      inFlight--;
      if (error) failure = error;
      else if (full.length === BUFFER_BYTES) spare.push(full);
      wake?.();
    });
    out.bytes = spare.pop() ?? new Uint8Array(BUFFER_BYTES);
    out.length = 0;
    while (inFlight >= CHUNKS_IN_FLIGHT && !failure)
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    wake = null;
    if (failure) throw failure;
  };
  const firstAppearance: BuildOptions = { version: 0, updatedDay: spec.day, firstDay: spec.day };
  for (let i = spec.start; i < spec.end; i++) {
    writeWork(corpus, i, firstAppearance, out);
    out.text('\n');
    if (out.length >= FLUSH_BYTES) await flush();
  }
  for (let u = 0; u < spec.updates.length; u++) {
    const update = { version: 1, updatedDay: spec.day, firstDay: spec.updateFirstDays[u]! };
    writeWork(corpus, spec.updates[u]!, update, out);
    out.text('\n');
    if (out.length >= FLUSH_BYTES) await flush();
  }
  if (out.length > 0) await flush();
  gzip.end();
  await closed;
  await rename(temp, target);
  const { size } = await stat(target);
  return {
    index: spec.index,
    path: spec.path,
    works: spec.end - spec.start + spec.updates.length,
    rawBytes,
    bytes: size,
  };
}

export async function loadTopics(path: string): Promise<TopicInput[]> {
  const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
  const list = Array.isArray(parsed) ? parsed : (parsed as { results?: unknown }).results;
  if (!Array.isArray(list) || list.length === 0)
    throw new Error(`${path}: expected a non-empty JSON array of topics`);
  for (const t of list as TopicInput[]) {
    if (
      typeof t?.id !== 'string' ||
      typeof t.display_name !== 'string' ||
      !t.subfield ||
      !t.field ||
      !t.domain
    ) {
      throw new Error(`${path}: every topic needs id, display_name, subfield, field and domain`);
    }
  }
  return list as TopicInput[];
}

export interface GenerateOptions {
  works: number;
  seed: number;
  outDir: string;
  topicsPath: string;
  /** Worker threads; 0 writes in this thread. Default 2. */
  workers?: number;
  /** Remove OUT/works first if it exists (otherwise a non-empty OUT/works is an error). */
  force?: boolean;
  maxWorksPerPart?: number;
  onPart?: (result: PartResult, done: number, total: number) => void;
}

export interface GenerateSummary {
  works: number;
  lines: number;
  files: number;
  partitions: number;
  rawBytes: number;
  bytes: number;
  seconds: number;
  parts: PartResult[];
}

/** The compiled worker next to this module; absent when running from TypeScript sources (tests). */
function workerUrl(): URL | null {
  const url = new URL('./generate-worker.js', import.meta.url);
  return import.meta.url.endsWith('.js') && existsSync(fileURLToPath(url)) ? url : null;
}

export class OutputNotEmptyError extends Error {}

export async function generateCorpus(opts: GenerateOptions): Promise<GenerateSummary> {
  const started = process.hrtime.bigint();
  const plan = planCorpus(opts.works, opts.seed, opts.maxWorksPerPart);
  const topics = await loadTopics(opts.topicsPath);
  const worksDir = join(opts.outDir, 'works');
  if (existsSync(worksDir) && (await readdir(worksDir)).length > 0) {
    if (!opts.force) throw new OutputNotEmptyError(`${worksDir} is not empty (use --force to replace it)`);
    await rm(worksDir, { recursive: true, force: true });
  }
  await mkdir(worksDir, { recursive: true });

  // Largest parts first so two workers finish close together.
  const queue = plan.parts
    .slice()
    .sort(
      (a, b) =>
        b.end - b.start + b.updates.length - (a.end - a.start + a.updates.length) || a.index - b.index,
    );
  const results: PartResult[] = [];
  const report = (r: PartResult): void => {
    results.push(r);
    opts.onPart?.(r, results.length, plan.parts.length);
  };
  const url = workerUrl();
  const nWorkers = url ? Math.min(opts.workers ?? 2, queue.length) : 0;
  // Workers start (load their modules) while this thread builds the corpus tables they then share.
  const workers = Array.from(
    { length: nWorkers },
    () =>
      new Worker(url!, {
        workerData: { outDir: opts.outDir } satisfies WorkerInit,
        resourceLimits: { maxYoungGenerationSizeMb: 64 },
      }),
  );
  let corpus: Corpus;
  try {
    corpus = createCorpus(opts.seed, opts.works, topics);
  } catch (error) {
    await Promise.all(workers.map((w) => w.terminate()));
    throw error;
  }
  if (nWorkers <= 0) {
    for (const spec of queue) report(await writePart(corpus, opts.outDir, spec));
  } else {
    const shared = shareCorpus(corpus);
    await Promise.all(workers.map((worker) => runWorker(worker, shared, queue, report)));
  }
  results.sort((a, b) => a.index - b.index);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    works: opts.works,
    lines: plan.lines,
    files: results.length,
    partitions: plan.days.length,
    rawBytes: results.reduce((s, r) => s + r.rawBytes, 0),
    bytes: results.reduce((s, r) => s + r.bytes, 0),
    seconds,
    parts: results,
  };
}

export interface WorkerInit {
  outDir: string;
}

/** To a worker: the corpus first, then one part to write at a time. */
export type WorkerRequest = { corpus: SharedCorpus } | { spec: PartSpec };
export type WorkerReply = { ok: true; result: PartResult } | { ok: false; error: string };

/** One worker pulls part specs from the shared queue until it is empty. */
function runWorker(
  worker: Worker,
  corpus: SharedCorpus,
  queue: PartSpec[],
  report: (r: PartResult) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let failed = false;
    const next = (): void => {
      const spec = queue.shift();
      if (!spec) {
        void worker.terminate().then(() => resolve());
        return;
      }
      worker.postMessage({ spec } satisfies WorkerRequest);
    };
    worker.on('message', (reply: WorkerReply) => {
      if (!reply.ok) {
        failed = true;
        queue.length = 0;
        void worker.terminate();
        reject(new Error(reply.error));
        return;
      }
      report(reply.result);
      next();
    });
    worker.on('error', (error) => {
      failed = true;
      queue.length = 0;
      reject(error);
    });
    worker.on('exit', (code) => {
      if (!failed && code !== 0 && code !== 1) reject(new Error(`generate worker exited with code ${code}`));
    });
    worker.postMessage({ corpus } satisfies WorkerRequest);
    next();
  });
}

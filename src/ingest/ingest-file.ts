import { TAGGER_VERSION, tagElements } from '../tagging/tagger.js';
import type { BatchCounts, ExcludedWork, TaggedWork } from './corpus-store.js';
import { readLines } from './line-reader.js';
import { readFields } from './field-scanner.js';
import { extractWork, WORK_FIELDS } from './work-record.js';

/** What ingesting one file did. Every line read is accounted for in exactly one count. */
export interface IngestCounts {
  read: number;
  kept: number;
  replaced: number;
  unchanged: number;
  removed: number;
  skipped: { retracted: number; paratext: number; malformed: number; invalid: number };
}

/** A line that could not be used, with where it is. Only the first few are kept per file. */
export interface BadLine {
  file: string;
  line: number;
  reason: string;
}

export interface FileResult {
  file: string;
  counts: IngestCounts;
  badLines: BadLine[];
  /** Set when the file itself could not be read to the end (e.g. a truncated gzip). */
  error: string | null;
}

export const MAX_BAD_LINES_KEPT = 20;
const BATCH = 2_000;

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

export function addCounts(into: IngestCounts, from: IngestCounts): void {
  into.read += from.read;
  into.kept += from.kept;
  into.replaced += from.replaced;
  into.unchanged += from.unchanged;
  into.removed += from.removed;
  into.skipped.retracted += from.skipped.retracted;
  into.skipped.paratext += from.skipped.paratext;
  into.skipped.malformed += from.skipped.malformed;
  into.skipped.invalid += from.skipped.invalid;
}

/** Where parsed batches go: the corpus store itself, or the thread that owns it. */
export type BatchSink = (works: TaggedWork[], excluded: ExcludedWork[], taggerVersion: number) => Promise<BatchCounts> | BatchCounts;

/**
 * Streams one works file into a sink. A malformed line is counted and reported with its line
 * number and never stops the file; a file that breaks off (bad gzip) keeps what was read before.
 * At most two batches are in flight, so memory stays bounded when the writer is slower.
 */
export async function ingestFile(
  sink: BatchSink,
  file: string,
  onProgress?: (compressedBytes: number, counts: IngestCounts) => void,
): Promise<FileResult> {
  const counts = emptyCounts();
  const badLines: BadLine[] = [];
  let works: TaggedWork[] = [];
  let excluded: ExcludedWork[] = [];
  const inFlight: Promise<void>[] = [];

  const add = (c: BatchCounts) => {
    counts.kept += c.kept;
    counts.replaced += c.replaced;
    counts.unchanged += c.unchanged;
    counts.removed += c.removed;
  };
  const flush = () => {
    if (works.length === 0 && excluded.length === 0) return;
    const written = Promise.resolve(sink(works, excluded, TAGGER_VERSION)).then(add);
    inFlight.push(written);
    works = [];
    excluded = [];
  };
  const drain = async () => {
    while (inFlight.length > 1) await inFlight.shift();
  };
  const bad = (line: number, reason: string) => {
    if (badLines.length < MAX_BAD_LINES_KEPT) badLines.push({ file, line, reason });
  };

  let error: string | null = null;
  try {
    await readLines(
      file,
      (buf, start, end, lineNumber) => {
        if (isBlank(buf, start, end)) return;
        counts.read++;
        let parsed: unknown;
        try {
          parsed = readFields(buf, start, end, WORK_FIELDS);
        } catch (e) {
          counts.skipped.malformed++;
          bad(lineNumber, `malformed JSON: ${(e as Error).message}`);
          return;
        }
        const result = extractWork(parsed);
        if (result.kind === 'invalid') {
          counts.skipped.invalid++;
          bad(lineNumber, result.reason);
        } else if (result.kind === 'excluded') {
          counts.skipped[result.reason]++;
          excluded.push({ id: result.id, updatedDate: result.updatedDate });
        } else {
          works.push({ row: result.row, elements: result.row.title ? tagElements(result.row.title) : [] });
          if (works.length >= BATCH) flush();
        }
      },
      (bytes) => onProgress?.(bytes, counts),
      drain,
    );
  } catch (e) {
    error = (e as Error).message;
  }
  flush();
  await Promise.all(inFlight);
  return { file, counts, badLines, error };
}

function isBlank(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i];
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

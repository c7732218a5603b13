import { ServiceError } from '../core/errors.js';
import { inSharedMemory } from '../util/shared-memory.js';
import type { ColumnQueries, SnapshotView } from './reader.js';

/**
 * The snapshot's whole-corpus columns (table paper_columns): one little-endian typed array per
 * name, indexed by paper ordinal, read in one blob each and kept with the open snapshot
 * (paperColumn). The lab's set algebra and research's candidates read them in memory instead
 * of random paper rows (1,000 random rows took 6-8 ms at 1M works). A blob must stay under
 * SQLite's limit (SQLITE_MAX_LENGTH, 1e9 bytes): a column larger than COLUMN_PART_BYTES is stored
 * in parts (column-parts.ts). The references are the largest: packed (packed-refs.ts), about 50 MB
 * at 1M works and 0.7 GB at 10M (0.9 GB as int32s before schema 11).
 */
export const PAPER_COLUMN_TYPES = {
  /** Publication year, 0 when unknown. */
  year: Int16Array,
  /** The paper's community (OpenAlex topic number), -1 when none. */
  cluster: Int32Array,
  /** Position in the global ranking order: lower is better (impact, then citations, then DOI). */
  rank_position: Int32Array,
  /** Recency weight at the cut-off, the RIS term (0 without a date). */
  recency: Float64Array,
  /** Impact score, NaN when unknown. */
  impact_score: Float64Array,
  /** Citation percentile within the paper's field and year, NaN when unknown. */
  citation_percentile: Float64Array,
  /** 1 for a high-impact paper (the top share by citation percentile), else 0. */
  high_impact: Uint8Array,
  /** 1 when the paper's community came from the citation graph, 0 from its topic or none. */
  cluster_from_citations: Uint8Array,
  /** The OpenAlex work id (W number) of each paper. */
  work_id: Float64Array,
  /** Every ordinal in DOI order (byte order of the text; no DOI last; ties by ordinal). */
  doi_order: Int32Array,
  /** Publication date as the number YYYYMMDD (its order is the date's), 0 when unknown. */
  pub_date: Int32Array,
  /** The references: paper p cites refs_start[p + 1] - refs_start[p] ordinals (packed-refs.ts). */
  refs_start: Int32Array,
  /** Every paper's cited ordinals, packed (packed-refs.ts). */
  refs_packed: Uint8Array,
  /** The byte of refs_packed at which every CHECKPOINT_PAPERS-th paper's references start. */
  refs_checkpoints: Float64Array,
} as const;

export type PaperColumnName = keyof typeof PAPER_COLUMN_TYPES;

export type PaperColumn<N extends PaperColumnName> = InstanceType<(typeof PAPER_COLUMN_TYPES)[N]>;

/** A column's blob as its typed array (typedArrayOf), undefined when absent. */
function readPaperColumn<N extends PaperColumnName>(
  reader: ColumnQueries,
  name: N,
): PaperColumn<N> | undefined {
  const blob = reader.paperColumn(name);
  return blob
    ? typedArrayOf(PAPER_COLUMN_TYPES[name] as unknown as TypedArrayType<PaperColumn<N>>, blob)
    : undefined;
}

type TypedArrayType<T> = {
  BYTES_PER_ELEMENT: number;
  new (buffer: ArrayBuffer, offset?: number, length?: number): T;
};

/**
 * A little-endian blob (a column, a posting list) as a typed array: a view of the blob's own
 * memory when it is aligned (a large blob gets a buffer of its own), else a copy. Copying 90 MB
 * cost 350 ms of page faults on a slow machine, more than SQLite's read of it.
 */
export function typedArrayOf<T>(Type: TypedArrayType<T>, blob: Buffer): T {
  const size = Type.BYTES_PER_ELEMENT;
  if (blob.byteOffset % size === 0)
    return new Type(blob.buffer as ArrayBuffer, blob.byteOffset, Math.floor(blob.length / size));
  const copy = new ArrayBuffer(blob.length);
  new Uint8Array(copy).set(blob);
  return new Type(copy);
}

/**
 * A whole-corpus column of an open snapshot, read once and kept with it (the lab and research share
 * it). A snapshot written before the column existed answers `data_unavailable`: `ri build` rewrites it.
 */
export function paperColumn<N extends PaperColumnName>(
  snapshot: SnapshotView<ColumnQueries>,
  name: N,
): PaperColumn<N> {
  return snapshot.memoize(`paper-column:${name}`, () => {
    const column = readPaperColumn(snapshot.reader, name);
    if (!column) {
      throw new ServiceError(
        'data_unavailable',
        `This snapshot was built by an older version without the column '${name}'; rebuild it with \`ri build\`.`,
      );
    }
    return column;
  });
}

/** Columns in memory that several threads read (SharedArrayBuffer: posted to a worker, not copied). */
export type SharedColumns = Partial<Record<PaperColumnName, SharedArrayBuffer>>;

/**
 * The given columns of an open snapshot, read (or taken from its memo) and copied into shared
 * memory, which the snapshot then reads too: the worker pool hands them to its other workers, so a
 * process holds one copy however many workers it has (about 110 MB at 1M works for research's).
 */
export function sharePaperColumns(
  snapshot: SnapshotView<ColumnQueries>,
  names: readonly PaperColumnName[],
): SharedColumns {
  const out: SharedColumns = {};
  for (const name of names)
    out[name] = inSharedMemory(paperColumn(snapshot, name)).buffer as unknown as SharedArrayBuffer;
  adoptPaperColumns(snapshot, out);
  return out;
}

/**
 * Makes the snapshot read the given shared columns, dropping any copy of its own (a worker asked
 * a question before the shared ones came): one copy per process, not one per worker.
 */
export function adoptPaperColumns(snapshot: SnapshotView<ColumnQueries>, columns: SharedColumns): void {
  for (const [name, shared] of Object.entries(columns) as [PaperColumnName, SharedArrayBuffer][]) {
    const key = `paper-column:${name}`;
    // Typed as the column's own arrays: the same reads, over memory other threads share.
    const view = () => new PAPER_COLUMN_TYPES[name](shared as unknown as ArrayBuffer);
    if (snapshot.memoize(key, view).buffer === (shared as unknown)) continue;
    snapshot.forget?.(key);
    snapshot.memoize(key, view);
  }
}

/** A YYYY-MM-DD date as the number YYYYMMDD (the corpus store keeps only that shape), 0 for none. */
export function dateNumber(date: string | null): number {
  if (date === null) return 0;
  return Number(date.slice(0, 4)) * 10_000 + Number(date.slice(5, 7)) * 100 + Number(date.slice(8, 10));
}

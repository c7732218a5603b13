import { operation, priceOf } from '../access/policy.js';
import type { ExportsAnswer, ExportTableAnswer } from '../contracts/exports.js';
import type { ExportFormat } from '../snapshot/exports.js';
import { readExportManifest } from '../snapshot/exports.js';
import { readPointerName } from '../snapshot/folder.js';
import type { HistoryQueries, SnapshotStamp, SnapshotView, SubjectQueries } from '../snapshot/reader.js';
import { keptVersions } from '../snapshot/versions.js';
import { listElements } from './elements.js';
import { readSeries } from './history.js';
import { envelope, type Viewer } from './viewer.js';

/**
 * The whole-table exports' tables: what each holds and its rows, read from a snapshot through the
 * same functions as the API's answers (an element's yearly history in a file is its
 * /v1/elements/{symbol}/history, HRI included: the files are the Professional plan's).
 */
type ExportView = SnapshotView<HistoryQueries & SubjectQueries>;
type Cell = string | number | null;

export interface ExportColumn {
  name: string;
  /** The column's type as DuckDB writes it into Parquet. */
  type: 'VARCHAR' | 'INTEGER' | 'DOUBLE';
  description: string;
}

export interface ExportTable {
  table: string;
  description: string;
  columns: ExportColumn[];
  /** The rows, each a cell per column in order. */
  rows(snapshot: ExportView): Iterable<Cell[]>;
}

/** What a file is downloaded as (its Content-Type) and named by, per format. */
export const EXPORT_FORMATS: Record<ExportFormat, { suffix: string; mediaType: string }> = {
  parquet: { suffix: '.parquet', mediaType: 'application/vnd.apache.parquet' },
  // The bytes are a gzip file (its sha256 is of them): sent as they are, never as a Content-Encoding
  // a client would undo, so a Range resumes the same bytes.
  csv: { suffix: '.csv.gz', mediaType: 'application/gzip' },
};

/** Who the files are written for: the Professional plan sees HRI. */
const FILE_VIEWER: Viewer = { hriAvailable: true, publicUrl: '' };

const SCORES: ExportColumn[] = [
  {
    name: 'ri',
    type: 'DOUBLE',
    description: 'RI: fractional papers per 10,000 corpus papers, trailing 12 months',
  },
  { name: 'ris', type: 'DOUBLE', description: 'RIS: 0-100, recency-weighted intensity on a log scale' },
  {
    name: 'hri',
    type: 'DOUBLE',
    description: 'HRI: RI among high-impact papers; empty where the period had none',
  },
];

const HISTORY: ExportColumn[] = [
  { name: 'year', type: 'INTEGER', description: 'The year (the last one open at the cut-off date)' },
  { name: 'ri', type: 'DOUBLE', description: "RI within the year's papers" },
  { name: 'ris', type: 'DOUBLE', description: 'RIS within the year' },
  {
    name: 'hri',
    type: 'DOUBLE',
    description: 'HRI within the year; empty where the year had no high-impact paper',
  },
  {
    name: 'papers',
    type: 'INTEGER',
    description: 'Papers of the subject that year (fractional weights not applied)',
  },
];

const SUBJECT_KEY: ExportColumn[] = [
  { name: 'subject_type', type: 'VARCHAR', description: 'topic or keyword' },
  { name: 'subject_id', type: 'VARCHAR', description: 'The OpenAlex topic id (T10074) or keyword slug' },
];

const elements = (snapshot: ExportView) => listElements(snapshot, FILE_VIEWER).elements;

function* histories(snapshot: ExportView, subjects: Iterable<['element' | 'topic' | 'keyword', string]>) {
  for (const [type, id] of subjects)
    for (const p of readSeries(snapshot, type, id, 'yearly', FILE_VIEWER)) yield { type, id, p };
}

export const EXPORT_TABLES: readonly ExportTable[] = [
  {
    table: 'elements',
    description: 'The 118 elements: current scores and paper counts, by atomic number',
    columns: [
      { name: 'symbol', type: 'VARCHAR', description: 'The chemical symbol' },
      { name: 'name', type: 'VARCHAR', description: 'The English name' },
      { name: 'atomic_number', type: 'INTEGER', description: 'Its atomic number' },
      { name: 'group', type: 'INTEGER', description: 'Its group (empty for lanthanides and actinides)' },
      { name: 'period', type: 'INTEGER', description: 'Its period' },
      ...SCORES,
      { name: 'paper_count', type: 'INTEGER', description: 'Papers whose headline elements include it' },
    ],
    *rows(snapshot) {
      for (const e of elements(snapshot))
        yield [e.symbol, e.name, e.atomic_number, e.group, e.period, e.ri, e.ris, e.hri, e.paper_count];
    },
  },
  {
    table: 'element_history',
    description:
      "Every element's yearly history, as /v1/elements/{symbol}/history answers it: by atomic number, then year",
    columns: [{ name: 'symbol', type: 'VARCHAR', description: 'The chemical symbol' }, ...HISTORY],
    *rows(snapshot) {
      const symbols = elements(snapshot).map((e) => ['element', e.symbol] as ['element', string]);
      for (const { id, p } of histories(snapshot, symbols))
        yield [id, Number(p.period), p.ri, p.ris, p.hri, p.papers];
    },
  },
  {
    table: 'subjects',
    description: 'Every topic and keyword: current scores and paper counts, by type, then id',
    columns: [
      ...SUBJECT_KEY,
      { name: 'name', type: 'VARCHAR', description: 'Its name' },
      { name: 'field', type: 'VARCHAR', description: "A topic's OpenAlex field (empty for keywords)" },
      { name: 'subfield', type: 'VARCHAR', description: "A topic's OpenAlex subfield (empty for keywords)" },
      { name: 'domain', type: 'VARCHAR', description: "A topic's OpenAlex domain (empty for keywords)" },
      ...SCORES,
      { name: 'paper_count', type: 'INTEGER', description: 'Papers with it among their headline subjects' },
    ],
    *rows(snapshot) {
      for (const s of snapshot.reader.subjectScores()) {
        const extra = JSON.parse(s.extra) as {
          field?: string | null;
          subfield?: string | null;
          domain?: string | null;
        };
        yield [
          s.type,
          s.id,
          s.name,
          extra.field ?? null,
          extra.subfield ?? null,
          extra.domain ?? null,
          s.ri,
          s.ris,
          s.hri,
          s.paper_count,
        ];
      }
    },
  },
  {
    table: 'subject_history',
    description:
      "Every topic's and keyword's yearly history, as /v1/subjects/{subject_type}/{subject_id}/history answers it: by type, id, then year",
    columns: [...SUBJECT_KEY, ...HISTORY],
    *rows(snapshot) {
      const subjects = snapshot.reader
        .subjectScores()
        .map((s) => [s.type, s.id] as ['topic' | 'keyword', string]);
      for (const { type, id, p } of histories(snapshot, subjects))
        yield [type, id, Number(p.period), p.ri, p.ris, p.hri, p.papers];
    },
  },
];

/** The file name of a table in a format: `elements.parquet`, `subject_history.csv.gz`. */
export function exportFileName(table: string, format: ExportFormat): string {
  return `${table}${EXPORT_FORMATS[format].suffix}`;
}

/** What the list says of each table. */
const TABLES: ExportTableAnswer[] = EXPORT_TABLES.map(({ table, description, columns }) => ({
  table,
  description,
  columns: columns.map((c) => ({ ...c })),
}));

const EXPORTS_NOTES =
  'Each kept data version has its own files, written once when it is published: a file is a copy of that version, ' +
  'byte for byte the same for as long as the version is kept. Check a download against its sha256; resume one ' +
  'with a Range request. The files need the Professional plan (or a per-file payment, x402).';

/**
 * GET /v1/exports: the files of every kept data version (the answering one alone when the read is
 * pinned), with their size, sha256, rows, URL and per-file price, and the tables' columns.
 */
export function listExports(
  snapshot: SnapshotStamp,
  snapshotDir: string,
  viewer: Viewer,
  pinned: boolean,
): ExportsAnswer {
  // The version answers come from by default (a pinned list names another).
  const current = readPointerName(snapshotDir, 'CURRENT') ?? (pinned ? null : snapshot.version);
  const kept = keptVersions(snapshotDir);
  const served = kept.find((v) => v.data_version === snapshot.version) ?? {
    data_version: snapshot.version,
    published_at: null,
    cutoff_date: snapshot.meta.cutoff_date ?? null,
  };
  const listed = pinned ? [served] : kept.some((v) => v === served) ? kept : [served, ...kept];
  const price = priceOf(operation('getExportFile'));
  return {
    versions: listed.map((v) => {
      const manifest = readExportManifest(snapshotDir, v.data_version);
      return {
        data_version: v.data_version,
        published_at: v.published_at,
        cutoff_date: v.cutoff_date,
        current: v.data_version === current,
        written: manifest !== null,
        files: (manifest?.files ?? []).map((f) => ({
          file: f.file,
          table: f.table,
          format: f.format,
          media_type: EXPORT_FORMATS[f.format].mediaType,
          bytes: f.bytes,
          sha256: f.sha256,
          rows: f.rows,
          url: `${viewer.publicUrl}/v1/exports/${v.data_version}/${f.file}`,
          price_usd: price ?? 0,
        })),
      };
    }),
    tables: TABLES,
    ...envelope(snapshot, viewer, '/docs', { cite: EXPORTS_NOTES }),
  };
}

/**
 * Whole-table exports: every element and every topic and keyword with RI, RIS, HRI, paper counts
 * and yearly history, as Parquet and as gzip CSV, one set per kept data version. The list's answer
 * and the parameters of the list and of a file.
 */
import { z } from '@hono/zod-openapi';
import { envelopeShape } from './common.js';
import { DATA_VERSION, DATA_VERSION_FORM } from './data-version.js';

const ExportFileSchema = z
  .object({
    file: z.string().openapi({ description: 'The file name: <table>.parquet or <table>.csv.gz' }),
    table: z.string().openapi({ description: 'The table it holds (tables lists their columns)' }),
    format: z.enum(['parquet', 'csv']).openapi({ description: 'parquet, or csv (RFC 4180, gzip)' }),
    media_type: z
      .string()
      .openapi({ description: 'Its Content-Type: application/vnd.apache.parquet or application/gzip' }),
    bytes: z.number().int().openapi({ description: 'Its size in bytes' }),
    sha256: z.string().openapi({ description: 'The SHA-256 of its bytes, hex: check a download against it' }),
    rows: z.number().int().openapi({ description: 'Its rows (the CSV has a header row besides)' }),
    url: z.string().url().openapi({ description: 'Where to download it (Range requests resume a download)' }),
    price_usd: z
      .number()
      .openapi({ description: 'Its per-file price without a key (x402, where the server takes payments)' }),
  })
  .openapi('ExportFile');

const ExportVersionSchema = z
  .object({
    data_version: z.string().openapi({ description: 'The data version the files are a copy of' }),
    published_at: z
      .string()
      .nullable()
      .openapi({ description: 'When it (last) became the current version, ISO 8601; null when unknown' }),
    cutoff_date: z.string().nullable().openapi({ description: 'Its corpus cut-off date' }),
    current: z.boolean().openapi({ description: 'True for the version answers come from by default' }),
    written: z.boolean().openapi({
      description: 'False while its files are not written yet (they are written when it is published)',
    }),
    files: z.array(ExportFileSchema),
  })
  .openapi('ExportVersion');

const ExportColumnSchema = z.object({
  name: z.string(),
  type: z.string().openapi({ description: 'Its Parquet logical type (as DuckDB names it)' }),
  description: z.string(),
});

const ExportTableSchema = z
  .object({
    table: z.string(),
    description: z.string(),
    columns: z.array(ExportColumnSchema),
  })
  .openapi('ExportTable');

export const ExportsSchema = z
  .object({
    versions: z.array(ExportVersionSchema).openapi({
      description:
        'Every kept data version with its files, most recently published first (pinned with data_version=: that version alone)',
    }),
    tables: z.array(ExportTableSchema).openapi({ description: 'What each table holds, column by column' }),
    ...envelopeShape,
  })
  .openapi('Exports');
export type ExportsAnswer = z.infer<typeof ExportsSchema>;
export type ExportTableAnswer = z.infer<typeof ExportTableSchema>;

/** The path of one file: /exports/{data_version}/{file}. */
export const ExportFileParams = z.object({
  data_version: z
    .string()
    .regex(DATA_VERSION, `expected a data_version: ${DATA_VERSION_FORM}`)
    .openapi({ param: { name: 'data_version', in: 'path' }, example: '3f9a0c1d2e4b5a6c' }),
  file: z
    .string()
    .regex(/^[a-z_]+\.(parquet|csv\.gz)$/, 'expected <table>.parquet or <table>.csv.gz')
    .openapi({ param: { name: 'file', in: 'path' }, example: 'elements.parquet' }),
});

/** A file's bytes (Parquet, or gzip CSV), as the OpenAPI document names a binary answer. */
export const ExportBytesSchema = z.string().openapi({ type: 'string', format: 'binary' });

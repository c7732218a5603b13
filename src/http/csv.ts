/**
 * CSV or JSON, by the request: `format=csv`, else an `Accept` that prefers text/csv. The CSV
 * itself (fields, quoting, the tables) is the contract's (contracts/csv.ts), which the pages'
 * downloads write too.
 */
import type { Context } from 'hono';
import { CSV_TYPE, type CsvTable, toCsv } from '../contracts/csv.js';

/**
 * Whether the Accept header prefers CSV: text/csv is listed with a quality above 0 and at
 * least that of application/json (so `text/csv, application/json;q=0.5` is CSV, a browser's
 * `*\/*` or no header is JSON).
 */
export function prefersCsv(accept: string | undefined): boolean {
  if (!accept?.includes('text/csv')) return false;
  let csv = 0;
  let json = 0;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const quality = q === undefined ? 1 : Number(q.slice(2));
    if (!Number.isFinite(quality)) continue;
    if (type === 'text/csv') csv = Math.max(csv, quality);
    else if (type === 'application/json') json = Math.max(json, quality);
  }
  return csv > 0 && csv >= json;
}

/** Whether a request asks for CSV: its format query parameter, else its Accept header. */
function wantsCsv(c: Context): boolean {
  const format = c.req.query('format');
  if (format === 'csv') return true;
  if (format === 'json') return false;
  return prefersCsv(c.req.header('accept'));
}

/** The route's answer as JSON, or as CSV when the request asks for it; both with Vary: Accept. */
export function jsonOrCsv<T extends { canonical_url: string; data_version: string }>(
  c: Context,
  answer: T,
  table: (answer: T) => CsvTable,
): Response {
  if (!wantsCsv(c)) return c.json(answer, 200, { vary: 'Accept' });
  return c.body(toCsv(table(answer)), 200, {
    'content-type': CSV_TYPE,
    vary: 'Accept',
    link: `<${answer.canonical_url}>; rel="canonical"`,
    'ri-data-version': answer.data_version,
  });
}

/**
 * CSV answers (RFC 4180) for the tabular reads, histories and paper lists, chosen by
 * `Accept: text/csv` or `format=csv`: a header row of the JSON fields, one record per point or paper, CRLF line
 * ends, fields with a comma, quote or line break in double quotes (quotes doubled). null is an
 * empty field; a list (a paper's elements, keywords) is one field, its items joined by ';'. The
 * answer's envelope goes in headers: Link (rel="canonical") and RI-Data-Version. Both forms of a
 * route say `Vary: Accept`, so caches keep them apart.
 *
 * Titles, venues and keywords come from the corpus, so a text field may start with what a
 * spreadsheet takes for a formula (`=`, `+`, `-`, `@`, TAB, CR): such a field is written quoted
 * with a single quote before it (OWASP's CSV injection advice), so it opens as text. Numbers
 * are written as they are: a negative number is a number, not a formula.
 */
import type { Context } from 'hono';

export const CSV_TYPE = 'text/csv; charset=utf-8';

/** The field names (the header row) and the records, in the JSON answer's field order. */
export interface CsvTable {
  fields: readonly string[];
  records: readonly Record<string, unknown>[];
}

/** What a spreadsheet reads as the start of a formula (or, TAB and CR, may hide one). */
const FORMULA_START = /^[=+\-@\t\r]/;

function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = Array.isArray(value) ? value.join(';') : String(value);
  if (FORMULA_START.test(text)) return `"'${text.replaceAll('"', '""')}"`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function toCsv(table: CsvTable): string {
  const lines = [table.fields.map(csvField).join(',')];
  for (const r of table.records) lines.push(table.fields.map((f) => csvField(r[f])).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

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

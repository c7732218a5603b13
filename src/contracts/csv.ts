/**
 * The CSV form of the tabular answers (RFC 4180): histories, elements and paper lists, written
 * the same by the API (`format=csv`, `Accept: text/csv`) and the pages' downloads. A header row
 * of the JSON fields, one record per point or paper, CRLF line ends, fields with a comma, quote or line break in double quotes (quotes doubled). null is an
 * empty field; a list (a paper's elements, keywords) is one field, its items joined by ';'. The
 * answer's envelope goes in headers: Link (rel="canonical") and RI-Data-Version. Both forms of a
 * route say `Vary: Accept`, so caches keep them apart.
 *
 * Titles, venues and keywords come from the corpus, so a text field may start with what a
 * spreadsheet takes for a formula (`=`, `+`, `-`, `@`, TAB, CR): such a field is written quoted
 * with a single quote before it (OWASP's CSV injection advice), so it opens as text. Numbers
 * are written as they are: a negative number is a number, not a formula.
 */
import { type HistoryPoint, HistoryPointSchema, type PaperEntry, PaperSchema } from './common.js';
import { type ElementScore, ElementScoreSchema } from './elements.js';

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

/** The CSV form of the tabular reads: the same fields as their JSON records, from the same schemas. */
const HISTORY_FIELDS = Object.keys(HistoryPointSchema.shape);
const PAPER_FIELDS = Object.keys(PaperSchema.shape);
const ELEMENT_FIELDS = Object.keys(ElementScoreSchema.shape);

/** A history series: one record per period. */
export function historyTable(answer: { series: HistoryPoint[] }): CsvTable {
  return { fields: HISTORY_FIELDS, records: answer.series as unknown as Record<string, unknown>[] };
}

/** Several elements' histories: one record per symbol and period. */
export function historiesTable(answer: {
  histories: { symbol: string; series: HistoryPoint[] }[];
}): CsvTable {
  return {
    fields: ['symbol', ...HISTORY_FIELDS],
    records: answer.histories.flatMap((h) => h.series.map((p) => ({ symbol: h.symbol, ...p }))),
  };
}

/** The elements: one record per element, in the answer's order. */
export function elementsTable(answer: { elements: ElementScore[] }): CsvTable {
  return { fields: ELEMENT_FIELDS, records: answer.elements as unknown as Record<string, unknown>[] };
}

/** A paper list: one record per paper, in the answer's order. */
export function papersTable(answer: { papers: PaperEntry[] }): CsvTable {
  return { fields: PAPER_FIELDS, records: answer.papers as unknown as Record<string, unknown>[] };
}

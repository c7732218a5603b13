import { z } from '@hono/zod-openapi';
import {
  type HistoryPoint,
  HistoryPointSchema,
  type PaperEntry,
  PaperSchema,
} from '../../contracts/common.js';
import { type ElementScore, ElementScoreSchema } from '../../contracts/elements.js';
import type { CsvTable } from '../csv.js';

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

/** The text/csv content of a 200 answer, for the OpenAPI document. */
export function csvContent(what: string) {
  return {
    'text/csv': {
      schema: z.string().openapi({
        description: `${what} as RFC 4180 CSV (with format=csv or Accept: text/csv): a header row of the JSON field names, one record per row; lists joined by ';'; a text field starting with =, +, -, @, TAB or CR gets a leading ' (CSV injection); the canonical_url in Link and the data_version in RI-Data-Version`,
      }),
    },
  };
}

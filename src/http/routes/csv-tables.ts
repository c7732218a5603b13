import { z } from '@hono/zod-openapi';

// The tables are the contract's, shared with the pages' downloads; the routes take them from here.
export { elementsTable, historiesTable, historyTable, papersTable } from '../../contracts/csv.js';

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

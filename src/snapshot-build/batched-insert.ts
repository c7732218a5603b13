import type Database from 'better-sqlite3';

/**
 * Rows of one table inserted `batch` at a time by one multi-row INSERT statement: a statement
 * call per row cost about as much as the row. For each row, write its values into `values` from
 * `next()`, then call `added()`; `flush()` inserts what is left, one row at a time, and must be
 * called before anything else is inserted into the table (rows go in in the order they were added).
 */
export interface BatchedInsert {
  readonly values: unknown[];
  next(): number;
  added(): void;
  flush(): void;
}

export function batchedInsert(
  db: Database.Database,
  table: string,
  columns: number,
  options: { batch?: number; row?: string } = {},
): BatchedInsert {
  const batch = options.batch ?? 64;
  // A row's placeholders: one per column unless given (e.g. with a CAST).
  const row = options.row ?? `(${Array(columns).fill('?').join(', ')})`;
  const one = db.prepare(`INSERT INTO ${table} VALUES ${row}`);
  const many = db.prepare(`INSERT INTO ${table} VALUES ${Array(batch).fill(row).join(', ')}`);
  const values: unknown[] = new Array(batch * columns);
  let pending = 0;
  return {
    values,
    next: () => pending * columns,
    added() {
      if (++pending < batch) return;
      many.run(values);
      pending = 0;
    },
    flush() {
      for (let r = 0; r < pending; r++) one.run(values.slice(r * columns, (r + 1) * columns));
      pending = 0;
    },
  };
}

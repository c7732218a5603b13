/**
 * The same values in a SharedArrayBuffer (copied once; a column already shared is returned as it
 * is), so that worker threads read one copy instead of each cloning its own.
 */
export function inSharedMemory<T extends ArrayBufferView>(column: T): T {
  if (column.buffer instanceof SharedArrayBuffer) return column;
  const Kind = column.constructor as new (buffer: SharedArrayBuffer) => T & { set(from: T): void };
  const out = new Kind(new SharedArrayBuffer(column.byteLength));
  out.set(column);
  return out;
}

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

/**
 * A zeroed typed array of `length` values in shared memory: what a build hands its scoring worker
 * is made there from the start, not copied there later (at 10M works the corpus's columns are
 * about 1.2 GB, held twice until the copies' originals were collected).
 */
export function sharedArray<T>(
  Type: { BYTES_PER_ELEMENT: number; new (buffer: SharedArrayBuffer): T },
  length: number,
): T {
  return new Type(new SharedArrayBuffer(length * Type.BYTES_PER_ELEMENT));
}

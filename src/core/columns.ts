import {
  type ColumnQueries,
  type PaperColumn,
  type PaperColumnName,
  readPaperColumn,
} from '../snapshot/paper-columns.js';
import type { SnapshotView } from '../snapshot/reader.js';
import { ServiceError } from './errors.js';

/**
 * A whole-corpus column of an open snapshot, read once and kept with it (the lab and research share
 * it). A snapshot written before the column existed answers `data_unavailable`: `ri build` rewrites it.
 */
export function paperColumn<N extends PaperColumnName>(
  snapshot: SnapshotView<ColumnQueries>,
  name: N,
): PaperColumn<N> {
  return snapshot.memoize(`paper-column:${name}`, () => {
    const column = readPaperColumn(snapshot.reader, name);
    if (!column) {
      throw new ServiceError(
        'data_unavailable',
        `This snapshot was built by an older version without the column '${name}'; rebuild it with \`ri build\`.`,
      );
    }
    return column;
  });
}

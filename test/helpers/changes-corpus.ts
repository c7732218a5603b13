import { join } from 'node:path';
import { ingest } from '../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../src/ingest/sources.js';
import { buildSnapshot } from '../../src/snapshot-build/build-snapshot.js';
import { tempDir, topic, work, writeWorks } from './works.js';

/**
 * The small corpus the changes and feeds tests publish in turns: four topics, and papers made to
 * order, each titled after its kind with a number of its own (a module's papers are numbered
 * apart from another test file's, as each file loads it anew).
 */
const IRON = topic(100, 'Iron catalysts', 0.99);
export const NICKEL = topic(200, 'Nickel electrodes', 0.99);
export const COPPER = topic(300, 'Copper wiring', 0.99);
export const LEARNING = topic(400, 'Machine learning for materials', 0.99);

let id = 1;
export const paper = (title: string, t: ReturnType<typeof topic>, date: string) =>
  work(id++, {
    title: `${title} ${id}`,
    publication_date: date,
    publication_year: Number(date.slice(0, 4)),
    primary_topic: t,
    topics: [t],
    // The cut-off is the newest publication date no later than the newest update.
    updated_date: '2025-12-01T00:00:00.000000',
    // Citations, so that HRI has high-impact papers to count.
    cited_by_count: (id * 7) % 23,
  });
export const many = (n: number, title: string, t: ReturnType<typeof topic>, date: string) =>
  Array.from({ length: n }, () => paper(title, t, date));

/** Ingests `records` into the corpus of `dataDir` and builds a snapshot in `snapshotDir`. */
export async function ingestAndBuild(
  dataDir: string,
  snapshotDir: string,
  records: Record<string, unknown>[],
) {
  const file = writeWorks(join(tempDir(), `works-${id}.jsonl`), records);
  await ingest(join(dataDir, 'corpus.duckdb'), expandWorksPaths([file]));
  return buildSnapshot(join(dataDir, 'corpus.duckdb'), snapshotDir);
}

/**
 * The first publication: the window (the 12 months to the cut-off, 2025-11-01) holds 10 iron,
 * 9 nickel and 10 copper papers (29); the nickel community has 9 recent papers, one short of
 * rising.
 */
export const firstPublication = () => [
  ...many(10, 'Iron catalysts in steelmaking', IRON, '2025-06-01'),
  ...many(10, 'Iron catalysts in steelmaking', IRON, '2021-06-01'),
  ...many(9, 'Nickel electrodes for batteries', NICKEL, '2025-06-01'),
  ...many(2, 'Nickel electrodes for batteries', NICKEL, '2021-06-01'),
  ...many(9, 'Copper wires in circuits', COPPER, '2025-06-01'),
  paper('Copper wires in circuits', COPPER, '2025-11-01'),
  ...many(10, 'Copper wires in circuits', COPPER, '2021-06-01'),
];

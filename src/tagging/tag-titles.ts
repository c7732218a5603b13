import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { runInWorker } from '../util/one-shot-worker.js';
import { workerFile } from '../util/worker-file.js';
import { tagElements } from './tagger.js';

/**
 * Titles tagged in one thread below this many: a worker's start (its thread, the tagger's
 * module) costs about what 10,000 titles do.
 */
export const PARALLEL_FROM = 100_000;

/** Each title's headline elements as stored: symbols joined by commas ('' for none or no title). */
export function tagTitles(titles: readonly (string | null)[]): string[] {
  return titles.map((t) => (t ? tagElements(t).join(',') : ''));
}

/**
 * tagTitles over every core: the titles are cut into as many consecutive parts as there are
 * cores, this thread tags the first while worker threads tag the others, and the parts are put
 * back in order, so the answer is tagTitles' whatever the split. At 1M titles the tagger takes
 * about 6 s of one core. Below PARALLEL_FROM titles, or without the compiled worker, one thread.
 */
export async function tagTitlesInParallel(
  titles: readonly (string | null)[],
  threads = availableParallelism(),
): Promise<string[]> {
  const file = workerFile(import.meta.url, './tag-worker.js');
  const parts = Math.min(threads, Math.ceil(titles.length / PARALLEL_FROM));
  if (parts <= 1 || !existsSync(file)) return tagTitles(titles);
  const size = Math.ceil(titles.length / parts);
  const others = Array.from({ length: parts - 1 }, (_, i) =>
    runInWorker<string[]>(file, { titles: titles.slice((i + 1) * size, (i + 2) * size) }, 'tagging'),
  );
  // A part that fails while this thread tags must not be left unhandled.
  for (const o of others) o.catch(() => {});
  const first = tagTitles(titles.slice(0, size));
  return first.concat(...(await Promise.all(others)));
}

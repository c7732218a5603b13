import type { CorpusStore } from '../ingest/corpus-store.js';
import { getOrCreate } from '../util/maps.js';
import { tagTitlesInParallel } from './tag-titles.js';
import { TAGGER_VERSION } from './tagger.js';

/**
 * Titles tagged at a time: the peak then does not follow the corpus (all 10M titles at once took
 * ingest to 5.2 GB; 2^20 of them about 0.3 GB over the rest), and a million works are one batch,
 * as before (each batch starts its worker threads again: 2^18 cost 10% more CPU at 1M).
 */
const TAG_BATCH = 1 << 20;

/**
 * The tag step of the pipeline (ingest -> tag -> build): tags the titles of the works in the
 * corpus store that have no tags from this tagger version (new or replaced works; every work
 * after a new tagger version) and stores them. `ri ingest`, `ri pull` and `ri update` run it
 * after their merge, and `ri build` runs it first, so the build always scores a fully tagged
 * corpus. The titles are read and tagged `batch` at a time. Returns the number of titles tagged.
 */
export async function tagWorks(store: CorpusStore, batch = TAG_BATCH): Promise<number> {
  await store.useTagger(TAGGER_VERSION);
  const ids: number[] = [];
  const symbols: string[] = [];
  // The same few thousand tags over and over: each kept once (a string per work was 10M at 10M works).
  const seen = new Map<string, string>();
  await store.forEachUntagged(batch, async (read, titles) => {
    const tags = await tagTitlesInParallel(titles);
    for (let i = 0; i < read.length; i++) {
      ids.push(read[i]!);
      symbols.push(getOrCreate(seen, tags[i]!, () => tags[i]!));
    }
  });
  await store.saveTags(ids, symbols);
  return ids.length;
}

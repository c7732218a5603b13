import type { CorpusStore } from '../ingest/corpus-store.js';
import { tagTitlesInParallel } from './tag-titles.js';
import { TAGGER_VERSION } from './tagger.js';

/**
 * The tag step of the pipeline (ingest -> tag -> build): tags the titles of the works in the
 * corpus store that have no tags from this tagger version (new or replaced works; every work
 * after a new tagger version) and stores them. `ri ingest`, `ri pull` and `ri update` run it
 * after their merge, and `ri build` runs it first, so the build always scores a fully tagged
 * corpus. Returns the number of titles tagged.
 */
export async function tagWorks(store: CorpusStore): Promise<number> {
  await store.useTagger(TAGGER_VERSION);
  const { ids, titles } = await store.untagged();
  const symbols = await tagTitlesInParallel(titles);
  await store.saveTags(ids, symbols);
  return ids.length;
}

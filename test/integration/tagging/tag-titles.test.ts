import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PARALLEL_FROM, tagTitles, tagTitlesInParallel } from '../../../src/tagging/tag-titles.js';
import { tagElements } from '../../../src/tagging/tagger.js';
import { workerFile } from '../../../src/util/worker-file.js';

/**
 * Tagging over every core gives the one-thread answer, title for title, whatever the number of
 * parts: the parts are put back in their order. The titles are the labelled set's, each made
 * distinct by its position, with missing titles among them, so a part out of place shows.
 */
const labelled = readFileSync(
  resolve(import.meta.dirname, '../../../fixtures/tagger/labelled-titles.jsonl'),
  'utf8',
)
  .split('\n')
  .filter(Boolean)
  .map((l) => (JSON.parse(l) as { title: string }).title);

function titles(n: number): (string | null)[] {
  return Array.from({ length: n }, (_, i) =>
    i % 97 === 0
      ? null
      : i % 5 === 0
        ? `${labelled[i % labelled.length]} (${i})`
        : `Study ${i} of Fe${(i % 9) + 1}O`,
  );
}

describe('tagging titles in parallel', () => {
  it('is the one-thread answer, in order, split in two or three parts', async () => {
    // The compiled worker (npm test builds it first): without it every part would be this thread's.
    expect(
      existsSync(
        workerFile(new URL('../../../src/tagging/tag-titles.ts', import.meta.url).href, './tag-worker.js'),
      ),
    ).toBe(true);
    const many = titles(2 * PARALLEL_FROM + 1234);
    const one = tagTitles(many);
    expect(one[0]).toBe('');
    expect(one[1]).toBe(tagElements('Study 1 of Fe2O').join(','));
    expect(new Set(one).size).toBeGreaterThan(10);
    expect(await tagTitlesInParallel(many, 2)).toEqual(one);
    expect(await tagTitlesInParallel(many, 3)).toEqual(one);
  }, 60_000);

  it('tags a few titles on this thread', async () => {
    const few = titles(50);
    expect(await tagTitlesInParallel(few, 8)).toEqual(tagTitles(few));
  });
});

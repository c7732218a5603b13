/**
 * docs/scale.md's share of the bundled real sample whose titles name an element, recounted with
 * the tagger of today, so the figures move with it (the command beside them in scale.md counts
 * the same through `ri tag`). Files and pure modules only, but tagging 21,079 titles takes
 * seconds: in the integration tier, so the unit tier stays fast.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { tagElements } from '../../../src/tagging/tagger.js';

const ROOT = resolve(import.meta.dirname, '../../..');

/** Records of a bundled file, and those whose title the tagger gives an element (as `ri tag` reads a line). */
function tagged(field: string): { tagged: number; records: number } {
  const lines = gunzipSync(readFileSync(join(ROOT, `fixtures/openalex/works-${field}.jsonl.gz`)))
    .toString('utf8')
    .split('\n')
    .filter(Boolean);
  const titles = lines.map((l) =>
    ((JSON.parse(l) as { title?: string | null }).title ?? '').replace(/[\r\n]/g, ' '),
  );
  return { tagged: titles.filter((t) => tagElements(t).length > 0).length, records: titles.length };
}

describe("docs/scale.md's element-bearing share of the bundled sample", () => {
  const text = readFileSync(join(ROOT, 'docs/scale.md'), 'utf8').replace(/\s+/g, ' ');
  for (const field of ['geoscience', 'chemistry']) {
    it(`states the ${field} records the tagger names an element in`, () => {
      const m = new RegExp(`([\\d.]+)% of the ${field} records \\(([\\d,]+) of ([\\d,]+),`).exec(text);
      expect(m, `"N% of the ${field} records (T of R," in docs/scale.md`).not.toBeNull();
      const [, percent, statedTagged, statedRecords] = m!;
      const count = tagged(field);
      expect({
        tagged: Number(statedTagged!.replace(/,/g, '')),
        records: Number(statedRecords!.replace(/,/g, '')),
      }).toEqual(count);
      expect(percent).toBe(((100 * count.tagged) / count.records).toFixed(1));
    });
  }
});

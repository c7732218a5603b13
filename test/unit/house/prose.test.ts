import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESPONSE_CACHE_BYTES } from '../../../src/http/fast-path/response-cache.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path, ext);
    return ext.test(name) ? [path] : [];
  });
}

/** Prose a reader of the repository can follow: it cites only what the repository holds. */
describe('prose', () => {
  it('cites no document outside the repository (the spec, DESIGN, issue notes)', () => {
    const sources = [
      ...files(join(ROOT, 'src'), /\.ts$/),
      ...files(join(ROOT, 'docs'), /\.md$/),
      ...files(join(ROOT, 'test'), /\.ts$/).filter((f) => !f.endsWith('prose.test.ts')),
      ...['bench', 'scripts', 'skill', 'deploy'].flatMap((d) =>
        files(join(ROOT, d), /\.(m?[jt]s|md|sh|ya?ml)$/),
      ),
      join(ROOT, 'README.md'),
    ];
    const outside =
      /spec part \d|DESIGN section \d|\bDESIGN\.md\b|\bSTYLE\.md\b|interface-spec|(the|an|see the) issue notes?\b/i;
    const cited = sources.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          outside.test(line) ? [`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(cited).toEqual([]);
  });

  it("docs/operations.md states the response cache's size as the code sets it", () => {
    const mb = RESPONSE_CACHE_BYTES / (1024 * 1024);
    const text = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const stated = [...text.matchAll(/(\d+) MB of bodies per snapshot/g)].map((m) => Number(m[1]));
    expect(stated).toEqual([mb]);
  });
});

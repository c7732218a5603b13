import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root (where package.json is), from src/config or dist/config alike. */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The bundled real sample: the embedded default corpus. */
export const BUNDLED_SAMPLE = {
  works: [
    join(PACKAGE_ROOT, 'fixtures/openalex/works-geoscience.jsonl.gz'),
    join(PACKAGE_ROOT, 'fixtures/openalex/works-chemistry.jsonl.gz'),
  ],
  topics: join(PACKAGE_ROOT, 'fixtures/openalex/topics.json'),
};

/** Where a data directory keeps its parts. */
export function dataPaths(dataDir: string) {
  const root = resolve(dataDir);
  return {
    root,
    corpus: join(root, 'corpus.duckdb'),
    snapshots: join(root, 'snapshots'),
  };
}

/** The service's own version (package.json), as the MCP server and the skill report it. */
export const SERVICE_VERSION: string = (
  JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

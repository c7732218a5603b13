import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** A minimal OpenAlex work record with the fields the service reads; override any of them. */
export function work(id: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `https://openalex.org/W${id}`,
    doi: `https://doi.org/10.1000/w${id}`,
    title: `Work ${id}`,
    publication_year: 2024,
    publication_date: '2024-06-01',
    primary_location: { source: { display_name: 'Journal of Tests' } },
    type: 'article',
    cited_by_count: 0,
    counts_by_year: [],
    is_retracted: false,
    is_paratext: false,
    primary_topic: topic(10001, 'Test Topic One', 0.99),
    topics: [topic(10001, 'Test Topic One', 0.99)],
    keywords: [{ id: 'https://openalex.org/keywords/testing', display_name: 'Testing', score: 0.7 }],
    referenced_works: [],
    updated_date: '2025-01-01T00:00:00.000000',
    ...overrides,
    display_name: overrides.display_name ?? overrides.title ?? `Work ${id}`,
  };
}

export function topic(id: number, name: string, score: number, fieldId = 16) {
  return {
    id: `https://openalex.org/T${id}`,
    display_name: name,
    score,
    subfield: { id: `https://openalex.org/subfields/${fieldId}01`, display_name: 'Sub' },
    field: { id: `https://openalex.org/fields/${fieldId}`, display_name: `Field ${fieldId}` },
    domain: { id: 'https://openalex.org/domains/3', display_name: 'Physical Sciences' },
  };
}

export function tempDir(prefix = 'ri-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Writes records (or raw lines) as JSONL, gzipped when the name ends in .gz. */
export function writeWorks(path: string, records: (Record<string, unknown> | string)[]): string {
  mkdirSync(dirname(path), { recursive: true });
  const text = `${records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n')}\n`;
  writeFileSync(path, path.endsWith('.gz') ? gzipSync(text) : text);
  return path;
}

/** Sixty titles in three research threads (iron oxides, nickel sulfides, CO2 on copper): a small corpus for snapshot tests. */
export const TITLES = Array.from({ length: 60 }, (_, i) =>
  i % 3 === 0
    ? `Iron oxide catalysts ${i}`
    : i % 3 === 1
      ? `Nickel sulfide electrodes ${i}`
      : `Copper CO2 reduction ${i}`,
);

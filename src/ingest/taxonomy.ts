import { readFileSync } from 'node:fs';
import type { TaxonomyTopic } from './corpus-store.js';

type Json = Record<string, unknown>;

/** The numeric part of an OpenAlex id: https://openalex.org/T10074 -> 10074. */
function openAlexNumber(v: unknown): number | null {
  const m = typeof v === 'string' ? /[A-Z](\d+)$/.exec(v) : null;
  return m ? Number(m[1]) : null;
}
const text = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const idOf = (v: unknown): number | null => {
  const m = typeof v === 'string' ? /(\d+)$/.exec(v) : null;
  return m ? Number(m[1]) : null;
};
const part = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});

/** Reads the OpenAlex topic taxonomy table (a JSON array of topics, as the topics endpoint gives). */
export function readTaxonomy(path: string): TaxonomyTopic[] {
  const data: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const list = Array.isArray(data)
    ? data
    : Array.isArray(part(data).results)
      ? (part(data).results as unknown[])
      : [];
  const topics: TaxonomyTopic[] = [];
  for (const raw of list) {
    const t = part(raw);
    const id = openAlexNumber(t.id);
    const name = text(t.display_name);
    if (id === null || name === null) continue;
    topics.push({
      id,
      name,
      description: text(t.description),
      keywords: Array.isArray(t.keywords) ? t.keywords.filter((k): k is string => typeof k === 'string') : [],
      subfieldId: idOf(part(t.subfield).id),
      subfield: text(part(t.subfield).display_name),
      fieldId: idOf(part(t.field).id),
      field: text(part(t.field).display_name),
      domainId: idOf(part(t.domain).id),
      domain: text(part(t.domain).display_name),
    });
  }
  return topics;
}

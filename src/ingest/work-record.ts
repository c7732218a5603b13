/**
 * From an OpenAlex work object to the compact row the corpus store keeps. Only the fields the
 * scores need are read; abstracts are never read. A missing field stays unknown (null), never a
 * made-up zero: the chemistry sample has no citation data and must say so.
 */

export interface TopicRef {
  id: number;
  name: string;
  score: number | null;
  subfieldId: number | null;
  subfield: string | null;
  fieldId: number | null;
  field: string | null;
  domainId: number | null;
  domain: string | null;
}

export interface KeywordRef {
  slug: string;
  name: string;
  score: number;
}

export interface WorkRow {
  id: number;
  /** OpenAlex updated_date as given, or '' when the record has none (then it never replaces). */
  updatedDate: string;
  doi: string | null;
  title: string | null;
  year: number | null;
  publicationDate: string | null;
  venue: string | null;
  type: string | null;
  citedByCount: number | null;
  /** [year, citations] pairs, or null when the record carries no counts_by_year. */
  countsByYear: [number, number][] | null;
  primaryTopic: TopicRef | null;
  topics: TopicRef[];
  keywords: KeywordRef[] | null;
  /** Referenced work ids (numeric part), or null when the record has no referenced_works field. */
  referencedWorks: number[] | null;
}

export type ExtractResult =
  | { kind: 'work'; row: WorkRow }
  | { kind: 'excluded'; id: number; updatedDate: string; reason: 'retracted' | 'paratext' }
  | { kind: 'invalid'; reason: string };

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The numeric part of an OpenAlex id: https://openalex.org/W123 -> 123, T10074 -> 10074. */
export function openAlexNumber(v: unknown): number | null {
  if (typeof v !== 'string') return null;
  const m = /([WTSAIC])(\d+)$/.exec(v);
  return m ? Number(m[2]) : null;
}

function trailingNumber(v: unknown): number | null {
  if (typeof v !== 'string') return null;
  const m = /(\d+)$/.exec(v);
  return m ? Number(m[1]) : null;
}

function topicRef(v: unknown): TopicRef | null {
  if (!isObject(v)) return null;
  const id = openAlexNumber(v.id);
  const name = str(v.display_name);
  if (id === null || name === null) return null;
  const sub = isObject(v.subfield) ? v.subfield : {};
  const field = isObject(v.field) ? v.field : {};
  const domain = isObject(v.domain) ? v.domain : {};
  return {
    id,
    name,
    score: num(v.score),
    subfieldId: trailingNumber(sub.id),
    subfield: str(sub.display_name),
    fieldId: trailingNumber(field.id),
    field: str(field.display_name),
    domainId: trailingNumber(domain.id),
    domain: str(domain.display_name),
  };
}

function keywordRef(v: unknown): KeywordRef | null {
  if (!isObject(v)) return null;
  const id = str(v.id);
  const name = str(v.display_name);
  const score = num(v.score);
  if (id === null || name === null || score === null) return null;
  const slug = id.slice(id.lastIndexOf('/') + 1);
  return slug ? { slug, name, score } : null;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The top-level fields extractWork reads: ingest parses only these. */
export const WORK_FIELDS: ReadonlySet<string> = new Set([
  'id',
  'doi',
  'title',
  'display_name',
  'publication_year',
  'publication_date',
  'primary_location',
  'type',
  'cited_by_count',
  'counts_by_year',
  'primary_topic',
  'topics',
  'keywords',
  'referenced_works',
  'is_retracted',
  'is_paratext',
  'updated_date',
]);

export function extractWork(record: unknown): ExtractResult {
  if (!isObject(record)) return { kind: 'invalid', reason: 'not a JSON object' };
  const id = openAlexNumber(record.id);
  if (id === null || !String(record.id).includes('W')) return { kind: 'invalid', reason: 'no work id' };
  const updatedDate = str(record.updated_date) ?? '';
  if (record.is_retracted === true) return { kind: 'excluded', id, updatedDate, reason: 'retracted' };
  if (record.is_paratext === true) return { kind: 'excluded', id, updatedDate, reason: 'paratext' };

  const pubDate = str(record.publication_date);
  const year = num(record.publication_year) ?? (pubDate ? Number(pubDate.slice(0, 4)) : null);
  const location = isObject(record.primary_location) ? record.primary_location : null;
  const source = location && isObject(location.source) ? location.source : null;
  const doi = str(record.doi);

  const countsByYear = Array.isArray(record.counts_by_year)
    ? record.counts_by_year
        .filter(isObject)
        .map((c) => [num(c.year), num(c.cited_by_count)] as const)
        .filter((c): c is readonly [number, number] => c[0] !== null && c[1] !== null)
        .map((c) => [c[0], c[1]] as [number, number])
    : null;
  const topics = Array.isArray(record.topics) ? record.topics.map(topicRef).filter((t) => t !== null) : [];
  const keywords = Array.isArray(record.keywords)
    ? record.keywords.map(keywordRef).filter((k) => k !== null)
    : null;
  const referencedWorks = Array.isArray(record.referenced_works)
    ? record.referenced_works.map(openAlexNumber).filter((n) => n !== null)
    : null;

  return {
    kind: 'work',
    row: {
      id,
      updatedDate,
      doi: doi ? doi.replace(/^https?:\/\/(dx\.)?doi\.org\//i, '').toLowerCase() : null,
      title: str(record.display_name) ?? str(record.title),
      year: year !== null && Number.isInteger(year) ? year : null,
      publicationDate: pubDate && DATE.test(pubDate) ? pubDate : null,
      venue: source ? str(source.display_name) : null,
      type: str(record.type),
      citedByCount: num(record.cited_by_count),
      countsByYear,
      primaryTopic: topicRef(record.primary_topic),
      topics,
      keywords,
      referencedWorks,
    },
  };
}

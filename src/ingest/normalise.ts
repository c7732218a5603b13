/**
 * The line-by-line path: for a file DuckDB cannot read as a whole (a malformed line, a wrong
 * type, a broken gzip), each line is parsed on its own, bad lines are reported with their line
 * numbers, and good records are rewritten with only the fields ingest reads, in the types it
 * expects, for DuckDB to merge like any other file.
 */

import type { WriteStream } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { readLines } from './line-reader.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const int = (v: unknown): number | null => {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) && Math.abs(n) < 2 ** 31 ? n : null;
};
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const bool = (v: unknown): boolean | null => (typeof v === 'boolean' ? v : null);
const named = (v: unknown) => (isObject(v) ? { display_name: text(v.display_name) } : null);
const WORK_ID = /^https:\/\/openalex\.org\/W\d+$/;

/** The record reduced to the fields ingest reads, each of the declared type or null. */
function normaliseRecord(r: Json): Json {
  const location = isObject(r.primary_location) ? r.primary_location : null;
  const topic = isObject(r.primary_topic) ? r.primary_topic : null;
  return {
    id: r.id,
    doi: text(r.doi),
    title: text(r.title),
    display_name: text(r.display_name),
    publication_year: int(r.publication_year),
    publication_date: text(r.publication_date),
    primary_location: location ? { source: named(location.source) } : null,
    type: text(r.type),
    cited_by_count: int(r.cited_by_count),
    counts_by_year: Array.isArray(r.counts_by_year)
      ? r.counts_by_year
          .filter(isObject)
          .map((c) => ({ year: int(c.year), cited_by_count: int(c.cited_by_count) }))
      : null,
    primary_topic: topic
      ? {
          id: text(topic.id),
          display_name: text(topic.display_name),
          subfield: named(topic.subfield),
          field: isObject(topic.field)
            ? { id: text(topic.field.id), display_name: text(topic.field.display_name) }
            : null,
          domain: named(topic.domain),
        }
      : null,
    topics: Array.isArray(r.topics)
      ? r.topics
          .filter(isObject)
          .map((t) => ({ id: text(t.id), display_name: text(t.display_name), score: num(t.score) }))
      : null,
    keywords: Array.isArray(r.keywords)
      ? r.keywords
          .filter(isObject)
          .map((k) => ({ id: text(k.id), display_name: text(k.display_name), score: num(k.score) }))
      : null,
    referenced_works: Array.isArray(r.referenced_works)
      ? r.referenced_works.filter((w) => typeof w === 'string')
      : null,
    is_retracted: bool(r.is_retracted),
    is_paratext: bool(r.is_paratext),
    updated_date: text(r.updated_date),
  };
}

export interface BadLine {
  file: string;
  line: number;
  reason: string;
}

export interface NormaliseResult {
  malformed: number;
  invalid: number;
  badLines: BadLine[];
  /** Set when the file could not be read to the end; the lines before it are kept. */
  error: string | null;
}

const MAX_BAD_LINES_KEPT = 20;

export async function normaliseFile(file: string, out: string): Promise<NormaliseResult> {
  const result: NormaliseResult = { malformed: 0, invalid: 0, badLines: [], error: null };
  const bad = (line: number, reason: string) => {
    if (result.badLines.length < MAX_BAD_LINES_KEPT) result.badLines.push({ file, line, reason });
  };
  const sink: WriteStream = createWriteStream(out);
  let pending: string[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    const chunk = pending.join('');
    pending = [];
    if (!sink.write(chunk)) await new Promise<void>((r) => sink.once('drain', () => r()));
  };
  try {
    await readLines(
      file,
      (buf, start, end, lineNumber) => {
        const line = buf.toString('utf8', start, end);
        if (line.trim() === '') return;
        let record: unknown;
        try {
          record = JSON.parse(line);
        } catch (e) {
          result.malformed++;
          bad(lineNumber, `malformed JSON: ${(e as Error).message}`);
          return;
        }
        if (!isObject(record)) {
          result.invalid++;
          bad(lineNumber, 'not a JSON object');
        } else if (typeof record.id !== 'string' || !WORK_ID.test(record.id)) {
          result.invalid++;
          bad(lineNumber, 'no OpenAlex work id');
        } else pending.push(`${JSON.stringify(normaliseRecord(record))}\n`);
      },
      undefined,
      flush,
    );
  } catch (e) {
    result.error = (e as Error).message;
  }
  await flush();
  await new Promise<void>((resolve, reject) =>
    sink.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
  return result;
}

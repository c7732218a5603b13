import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CorpusStore, openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { normaliseTitle, normaliseVenue } from '../../../src/ingest/paper-record.js';
import { ri } from '../../helpers/cli.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';

/**
 * The snapshot writer reads each paper's DOI, title, venue and date from the corpus store as one
 * joined string (U+001F between fields, U+001B escapes): texts holding those characters, or the
 * escape sequences themselves, and missing fields must come out as they went in. The oracle is
 * the corpus store's own works table, its titles and venues as a reader gets them
 * (ingest/paper-record.ts: whitespace trimmed, placeholder venues null).
 */
const HOSTILE = [
  'Unit\u001fseparator inside',
  'Escape \u001b and \u001bs and \u001be and \u001bn',
  '\u001bn',
  '\u001b',
  '\u001f',
  '\u001f\u001b\u001f',
  'Fe–Ni alloys ✓ 𝔽e (astral) ',
  '',
];

let dir: string;
let store: CorpusStore;
let snapshot: Database.Database;

beforeAll(async () => {
  dir = tempDir('ri-paper-texts-');
  const records = [
    ...HOSTILE.map((title, i) =>
      work(700 + i, {
        title: `Iron ${title}`,
        doi: i % 3 === 0 ? null : `https://doi.org/10.1000/x${i}\u001f${i % 2 ? '\u001b' : ''}`,
        primary_location: i % 4 === 1 ? null : { source: { display_name: i % 2 ? `Venue ${title}` : title } },
        publication_date: i % 5 === 2 ? null : '2024-06-01',
      }),
    ),
    work(800, { title: null, display_name: null, primary_location: null, doi: null }),
  ];
  const data = join(dir, 'data');
  const run = (args: string[]) => {
    const r = ri(args);
    if (r.status !== 0) throw new Error(`ri ${args[0]} failed: ${r.stderr}`);
    return r.stdout.trim().split('\n').at(-1)!;
  };
  run(['ingest', writeWorks(join(dir, 'works.jsonl'), records), '--data-dir', data]);
  const version = run(['build', '--data-dir', data]);
  store = await openCorpusStore(join(data, 'corpus.duckdb'));
  snapshot = new Database(join(data, 'snapshots', `${version}.sqlite`), { readonly: true });
}, 60_000);

afterAll(() => {
  snapshot?.close();
  store?.close();
});

describe('paper texts in the snapshot', () => {
  it('are the corpus store texts, separators, escapes and NULLs included', async () => {
    const stored = await store.rows<Record<string, unknown>>(
      'SELECT id::DOUBLE AS work_id, doi, title, venue, pub_date FROM works ORDER BY id',
    );
    const written = snapshot
      .prepare('SELECT work_id, doi, title, venue, pub_date FROM papers ORDER BY work_id')
      .all();
    expect(stored.length).toBe(HOSTILE.length + 1);
    expect(written).toEqual(
      stored.map((r) => ({
        ...r,
        title: normaliseTitle(r.title as string | null),
        venue: normaliseVenue(r.venue as string | null),
      })),
    );
    // The hostile texts did reach the store (else the comparison proves little).
    expect(stored.map((r) => r.title)).toContain(`Iron ${HOSTILE[1]}`);
    expect(stored.some((r) => r.venue === null)).toBe(true);
    expect(stored.some((r) => r.doi === null)).toBe(true);
    expect(stored.some((r) => r.pub_date === null)).toBe(true);
  });
});

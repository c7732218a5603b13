import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { toCsv } from '../../../src/contracts/csv.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { buildSnapshot } from '../../../src/snapshot-build/build-snapshot.js';
import { emptyState } from '../../helpers/app.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';

/**
 * CSV injection: corpus titles, venues and keywords that start like a spreadsheet formula are
 * written as text (a single quote first, inside a quoted field), over real HTTP.
 */
const HOSTILE = ['=HYPERLINK("http://evil.example","x")', '+1+1', '-2+3', '@SUM(A1)', '\t=1+1', '\r=1+1'];

let manager: SnapshotManager;
let server: RunningServer;
let state: StateStore;
let key: string;

beforeAll(async () => {
  const sample = await sampleDataDir();
  // Each hostile string as a title, a venue and a keyword of a new iron paper (the newest).
  const works = HOSTILE.map((bad, i) =>
    work(990_000 + i, {
      title: `${bad} iron nitride catalyst ${i}`,
      primary_location: { source: { display_name: `${bad} Journal` } },
      keywords: [{ id: `https://openalex.org/keywords/k${i}`, display_name: `${bad} kw`, score: 0.9 }],
      publication_date: '2025-12-01',
      publication_year: 2025,
    }),
  );
  const file = writeWorks(join(tempDir(), 'hostile.jsonl'), works);
  await ingest(join(sample.dataDir, 'corpus.duckdb'), expandWorksPaths([file]));
  await buildSnapshot(join(sample.dataDir, 'corpus.duckdb'), sample.snapshots);
  manager = new SnapshotManager(sample.snapshots);
  await manager.start();
  state = await emptyState();
  const account = await state.createAccount({ email: 'csv@example.org', plan: 'professional' });
  key = (await state.createKey(account.id)).key;
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', PUBLIC_URL: 'https://ri.example' });
  server = await startServer(config, manager, state, () => {});
}, 120_000);

afterAll(async () => {
  await server?.close();
  manager?.stop();
  await state?.close();
});

async function get(path: string, accept: string) {
  const res = await fetch(`${server.url}${path}`, {
    headers: { authorization: `Bearer ${key}`, accept, 'accept-encoding': 'identity' },
  });
  expect(res.status).toBe(200);
  return res.text();
}

/** RFC 4180 records (quoted fields may hold CR, LF, commas and doubled quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  return rows;
}

describe('CSV answers', () => {
  it('write a text field that starts like a formula as text: a quote first, inside double quotes', async () => {
    const path = '/v1/elements/Fe/papers?sort=newest&limit=100';
    const json = JSON.parse(await get(path, 'application/json')) as {
      papers: { title: string | null; venue: string | null; keywords: string[] }[];
    };
    const csv = await get(path, 'text/csv');
    const [header, ...records] = parseCsv(csv);
    const col = (name: string) => header!.indexOf(name);
    expect(records).toHaveLength(json.papers.length);
    const risky = /^[=+\-@\t\r]/;
    let checked = 0;
    json.papers.forEach((paper, i) => {
      const record = records[i]!;
      for (const [name, value] of [
        ['title', paper.title],
        ['venue', paper.venue],
        ['keywords', paper.keywords.join(';')],
      ] as const) {
        const cell = record[col(name)]!;
        if (value !== null && risky.test(value)) {
          checked++;
          expect([name, cell]).toEqual([name, `'${value}`]);
        } else expect([name, cell]).toEqual([name, value ?? '']);
      }
    });
    // The hostile papers are in the list (the test cannot pass on a corpus without them).
    expect(checked).toBeGreaterThanOrEqual(HOSTILE.length * 2);
  });

  it('write numbers as numbers, negative ones included', () => {
    const csv = toCsv({
      fields: ['period', 'ri', 'hri', 'title'],
      records: [{ period: '2024-01', ri: -0.25, hri: -3, title: '-3' }],
    });
    expect(csv).toBe(`period,ri,hri,title\r\n2024-01,-0.25,-3,"'-3"\r\n`);
  });
});

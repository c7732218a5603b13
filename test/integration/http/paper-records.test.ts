import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStateStore } from '../../../src/access/open-state-store.js';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { createApp } from '../../../src/http/app.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { paymentsFromConfig } from '../../../src/payments/from-config.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { buildSnapshot } from '../../../src/snapshot-build/build-snapshot.js';
import { checkedRequests } from '../../helpers/contract.js';
import { TITLES, tempDir, work, writeWorks } from '../../helpers/works.js';

/**
 * Paper records as a reader expects them, through the public interface: over a hand-made corpus
 * whose records carry markup in titles, placeholder venues and two versions of two works (a
 * preprint and its article; Angewandte's two language editions), a paper list (JSON and CSV) and
 * research answer with the title without markup, the venue null, and each work once.
 */
const ARTICLE_TITLE =
  'Fe<sub>3</sub>O<sub>4</sub> nanoparticles on <i>in situ</i> grown iron oxide electrodes';
const SHOWN_TITLE = 'Fe₃O₄ nanoparticles on in situ grown iron oxide electrodes';
const EDITION_TITLE = 'Iron &amp; nickel oxide catalysts for the oxygen evolution reaction in seawater';

let snapshots: SnapshotManager;
let state: StateStore;
let app: ReturnType<typeof createApp>;
let key: string;

beforeAll(async () => {
  const dir = tempDir('ri-paper-records-');
  const filler = TITLES.map((title, i) =>
    work(1_000 + i, { title, publication_date: `2024-0${1 + (i % 9)}-1${i % 10}`, publication_year: 2024 }),
  );
  const versions = [
    // The article, in a journal whose name OpenAlex lost, and its SSRN preprint (titled plainly).
    work(2_000, {
      title: ARTICLE_TITLE,
      doi: 'https://doi.org/10.1016/j.example.2025.000001',
      primary_location: { source: { display_name: 'Deleted Journal' } },
      cited_by_count: 5,
      publication_date: '2024-10-01',
      publication_year: 2024,
    }),
    work(2_001, {
      title: 'Fe3O4 Nanoparticles on In Situ Grown Iron Oxide Electrodes',
      doi: 'https://doi.org/10.2139/ssrn.4800001',
      primary_location: { source: { display_name: 'No host' } },
      cited_by_count: 9,
      publication_date: '2024-03-01',
      publication_year: 2024,
    }),
    // Two language editions: the International one has the citations.
    work(2_002, {
      title: EDITION_TITLE,
      doi: 'https://doi.org/10.1002/ange.202500001',
      primary_location: { source: { display_name: 'Angewandte Chemie' } },
      cited_by_count: 1,
      publication_date: '2024-09-01',
      publication_year: 2024,
    }),
    work(2_003, {
      title: EDITION_TITLE,
      doi: 'https://doi.org/10.1002/anie.202500001',
      primary_location: { source: { display_name: 'Angewandte Chemie International Edition' } },
      cited_by_count: 7,
      publication_date: '2024-09-01',
      publication_year: 2024,
    }),
  ];
  const corpus = join(dir, 'corpus.duckdb');
  await ingest(corpus, expandWorksPaths([writeWorks(join(dir, 'works.jsonl'), [...filler, ...versions])]));
  await buildSnapshot(corpus, join(dir, 'snapshots'));
  snapshots = new SnapshotManager(join(dir, 'snapshots'));
  await snapshots.start();
  state = await openStateStore(undefined, tempDir('ri-state-'));
  await state.migrate();
  const config = loadConfig({}, { PUBLIC_URL: 'https://ri.example' });
  app = checkedRequests(
    createApp({ config, snapshots, state, payments: paymentsFromConfig(config, state, {}) }),
  );
  const account = await state.createAccount({ email: 'reader@example.org', plan: 'professional' });
  key = (await state.createKey(account.id)).key;
}, 120_000);

afterAll(async () => {
  snapshots?.stop();
  await state?.close();
});

const get = (path: string, accept = 'application/json') =>
  app.request(path, { headers: { authorization: `Bearer ${key}`, accept } });

interface Paper {
  title: string;
  doi: string | null;
  venue: string | null;
}

describe('paper records', () => {
  it('an element paper list shows the title without markup, the venue null and each work once', async () => {
    const res = await get('/v1/elements/Fe/papers?limit=100&sort=newest');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { papers: Paper[]; total_papers?: number };
    const dois = body.papers.map((p) => p.doi);
    expect(dois).toContain('10.1016/j.example.2025.000001');
    expect(dois).not.toContain('10.2139/ssrn.4800001');
    expect(dois).toContain('10.1002/anie.202500001');
    expect(dois).not.toContain('10.1002/ange.202500001');
    const article = body.papers.find((p) => p.doi === '10.1016/j.example.2025.000001')!;
    expect(article).toMatchObject({ title: SHOWN_TITLE, venue: null });
    const edition = body.papers.find((p) => p.doi === '10.1002/anie.202500001')!;
    expect(edition.title).toBe('Iron & nickel oxide catalysts for the oxygen evolution reaction in seawater');
    expect(body.papers.every((p) => !/[<>]|&amp;/.test(p.title))).toBe(true);
  });

  it('the CSV of the list carries the same texts', async () => {
    const res = await get('/v1/elements/Fe/papers?limit=100&sort=newest', 'text/csv');
    expect(res.status).toBe(200);
    const csv = await res.text();
    expect(csv).toContain(SHOWN_TITLE);
    expect(csv).not.toContain('<sub>');
    expect(csv).not.toContain('Deleted Journal');
    expect(csv).not.toContain('ssrn');
    expect(csv).not.toContain('ange.202500001');
  });

  it('research answers list the shown version, as written for a reader', async () => {
    const res = await get(
      `/v1/research?q=${encodeURIComponent('iron oxide nanoparticles electrodes')}&page_size=10`,
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as { lists: Record<string, Paper[]> };
    const papers = Object.values(body.lists).flat();
    expect(papers.some((p) => p.title === SHOWN_TITLE && p.venue === null)).toBe(true);
    expect(papers.some((p) => p.doi === '10.2139/ssrn.4800001')).toBe(false);
  });

  it('the corpus counts each work once', async () => {
    const res = await get('/v1/elements/Fe');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { paper_count: number; notes: { data: string } };
    // 20 iron titles of the filler, the article and one edition; 60 filler works and those two in all.
    expect(body.paper_count).toBe(22);
    expect(body.notes.data).toContain(' 62 works');
  });
});

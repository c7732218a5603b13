import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/core/errors.js';
import { subscriptDigits } from '../../../src/core/research/question.js';
import { LENSES, research } from '../../../src/core/research.js';
import { searchSubjects } from '../../../src/core/subjects.js';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { readTaxonomy } from '../../../src/ingest/taxonomy.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { Snapshot } from '../../../src/snapshot/snapshot.js';
import { buildSnapshot } from '../../../src/snapshot-build/build-snapshot.js';
import { tempDir, topic, work, writeWorks } from '../../helpers/works.js';

/**
 * The ranking rules of the research search and the subjects search, pinned on a hand-built corpus:
 * a big community holding one common word of the question, a small one holding all of it, and
 * communities known only by their own texts.
 */

const BIG = 20001;
const AEROSOL = 20002;
const INDENT = 20003;
const GLACIER = 20004;

const TAXONOMY = [
  [
    BIG,
    'Geological Formation Studies',
    'Stratigraphy and the mapping of rock formations and basins.',
    ['Stratigraphy'],
  ],
  [
    AEROSOL,
    'Atmospheric Aerosol Chemistry',
    'Aerosol formation, particle nucleation and air quality.',
    ['Aerosols'],
  ],
  [INDENT, 'Nanoindentation of Thin Films', 'Hardness and elastic modulus of coatings.', ['Nanoindentation']],
  [GLACIER, 'Glacier Mass Balance', 'Ice sheets and mountain glaciers under warming.', ['Cryosphere']],
].map(([id, name, description, keywords]) => ({
  id: `https://openalex.org/T${id}`,
  display_name: name,
  description,
  keywords,
  subfield: { id: 'https://openalex.org/subfields/1901', display_name: 'Sub' },
  field: { id: 'https://openalex.org/fields/19', display_name: 'Field 19' },
  domain: { id: 'https://openalex.org/domains/3', display_name: 'Physical Sciences' },
}));

const inTopic = (id: number, name: string) => ({
  primary_topic: topic(id, name, 0.99),
  topics: [topic(id, name, 0.99)],
});

/** Forty well-cited papers of the big community, each naming a formation; three uncited aerosol papers. */
const WORKS = [
  ...Array.from({ length: 40 }, (_, i) =>
    work(1000 + i, {
      title: `Formation ${i} of the basin stratigraphy`,
      publication_year: 2025,
      publication_date: `2025-0${1 + (i % 9)}-01`,
      cited_by_count: 200 + i,
      counts_by_year: [{ year: 2025, cited_by_count: 200 + i }],
      ...inTopic(BIG, 'Geological Formation Studies'),
    }),
  ),
  ...[
    'Secondary aerosol formation in urban air',
    'Aerosol formation from marine emissions',
    'New aerosol formation events',
  ].map((title, i) =>
    work(2000 + i, {
      title,
      publication_year: 2025,
      publication_date: '2025-03-01',
      cited_by_count: null,
      counts_by_year: [],
      ...inTopic(AEROSOL, 'Atmospheric Aerosol Chemistry'),
    }),
  ),
  // One word of 'aerosol formation', in its leading community and as uncited as the three above.
  work(2100, {
    title: 'Aerosol optical depth',
    publication_year: 2025,
    publication_date: '2025-03-01',
    cited_by_count: null,
    counts_by_year: [],
    ...inTopic(AEROSOL, 'Atmospheric Aerosol Chemistry'),
  }),
  work(3000, {
    title: 'Hardness of sputtered coatings',
    ...inTopic(INDENT, 'Nanoindentation of Thin Films'),
  }),
  work(4000, { title: 'Mountain glaciers in the Alps', ...inTopic(GLACIER, 'Glacier Mass Balance') }),
  // Shown as Fe₃O₄ (ingest/paper-record.ts): asked as people type it, Fe3O4.
  work(5000, {
    title: 'Hardness of Fe<sub>3</sub>O<sub>4</sub> coatings',
    ...inTopic(INDENT, 'Nanoindentation of Thin Films'),
  }),
];

let snapshot: Snapshot;
beforeAll(async () => {
  const dir = tempDir('ri-relevance-');
  const topics = join(dir, 'topics.json');
  writeFileSync(topics, JSON.stringify(TAXONOMY));
  const corpus = join(dir, 'corpus.duckdb');
  const store = await openCorpusStore(corpus);
  await store.loadTaxonomy(readTaxonomy(topics));
  store.close();
  await ingest(corpus, expandWorksPaths([writeWorks(join(dir, 'works', 'part_000.gz'), WORKS)]));
  const built = await buildSnapshot(corpus, join(dir, 'snapshots'));
  snapshot = new Snapshot(built.version, snapshotFile(join(dir, 'snapshots'), built.version));
}, 60_000);
afterAll(() => snapshot?.retire());

const viewer = { hriAvailable: true, publicUrl: 'https://ri.example' };
const ask = (q: string) => research(snapshot, { q, pageSize: 10, lenses: [...LENSES], page: 1 }, viewer);

describe('research communities by the weight of evidence', () => {
  it('puts the community holding the whole question first, not the big one holding one common word of it', () => {
    const a = ask('aerosol formation');
    expect(a.communities[0]!.subject_id).toBe(`T${AEROSOL}`);
    expect(a.communities[0]!.reason).toMatch(/closest-matching papers belong to it/);
    // The big community is still there, behind, with its reason.
    const big = a.communities.find((c) => c.subject_id === `T${BIG}`);
    expect(big?.reason.length).toBeGreaterThan(0);
  });

  it('answers a question whose words are in a community description but in no title, saying so', () => {
    const a = ask('cryosphere');
    expect(a.matched_papers).toBe(0);
    expect(a.communities[0]!.subject_id).toBe(`T${GLACIER}`);
    expect(a.communities[0]!.reason).toMatch(
      /^found from its own texts: its name, description or keywords hold the question/,
    );
    expect(a.notes.communities).toMatch(/^1 community has evidence for this question, all named/);
    expect(a.lists.now).toEqual([]);
    expect(a.notes.empty).toMatch(/no paper title matches the question/);
  });

  it('a community holding one word of the question in its texts is named for other evidence only, and says what matched', () => {
    // 'sheets' is in the glacier community's description only; 'coatings' in the coatings papers' titles.
    const a = ask('sheets coatings');
    const glacier = a.communities.find((c) => c.subject_id === `T${GLACIER}`);
    // Named here by the titles' topic model (in this tiny corpus its texts weigh as three titles).
    expect(glacier?.reason).toMatch(/hold 50% of the question's words/);
    expect(glacier?.reason).toMatch(/% of the question by the titles' topic model/);
    expect(glacier?.reason).not.toMatch(/hold the question/);
    expect(a.notes.communities).toMatch(new RegExp(`^${a.communities.length} communities have evidence`));
    // Asked by words its texts hold together, it is named from them.
    expect(ask('ice sheets').communities[0]?.reason).toMatch(
      /its name, description or keywords hold the question/,
    );
  });

  it('answers 404 nothing_matched only when neither titles nor community texts match', () => {
    expect(() => ask('zzqxv')).toThrow(ServiceError);
    try {
      ask('zzqxv');
    } catch (e) {
      expect((e as ServiceError).code).toBe('nothing_matched');
    }
  });
});

describe('the titles topic model: what the corpus title-community pairs teach', () => {
  it('counts per title term the titles of each community holding it, its own texts as three', () => {
    const { reader } = snapshot;
    const pairs = (word: string) => {
      const t = reader
        .topicTerms([reader.titleTerm(word)!])
        .values()
        .next().value;
      return t && { weight: t.weight, topics: [...t.topics] };
    };
    // Four aerosol titles, and the community's name, description and keywords.
    expect(pairs('aerosol')).toEqual({ weight: 7, topics: [AEROSOL, 7] });
    // Forty formation titles of the big community and its texts; three aerosol titles and their texts.
    expect(pairs('formation')).toEqual({ weight: 49, topics: [BIG, 43, AEROSOL, 6] });
    expect(reader.topicLengths()!.titles.get(BIG)).toBe(40);
  });

  it('names the topic model in the reason of a community it finds', () => {
    const a = ask('mountain glaciers');
    expect(a.communities[0]!.subject_id).toBe(`T${GLACIER}`);
    expect(a.communities[0]!.reason).toMatch(/titles' topic model/);
  });
});

describe('formulas', () => {
  it('finds a title that writes a formula with subscripts (Fe₃O₄) from the formula as typed (Fe3O4)', () => {
    expect(subscriptDigits('fe3o4')).toBe('fe₃o₄');
    expect(subscriptDigits('2024')).toBe('2024');
    const a = ask('Fe3O4 coatings');
    // The formula's title carries every word; the other coatings paper only one of them.
    const [first, second] = a.lists.now!;
    expect(first!.title).toBe('Hardness of Fe₃O₄ coatings');
    expect(first!.reason).toMatch(/^its title has every word of the question/);
    expect(second!.reason).toMatch(/^a looser title match/);
    expect(a.communities[0]!.subject_id).toBe(`T${INDENT}`);
  });
});

describe('reading lists relevant first', () => {
  it('now: close matches first, a loosely matched paper never leads for its citation data', () => {
    const now = ask('aerosol formation').lists.now!;
    // The three aerosol papers carry every word but no citations; the forty cited ones share one word.
    expect(now.slice(0, 3).map((p) => p.title)).toEqual(
      expect.arrayContaining([
        'Secondary aerosol formation in urban air',
        'Aerosol formation from marine emissions',
        'New aerosol formation events',
      ]),
    );
    expect(now[0]!.reason).toMatch(/^its title has every word of the question; no citation data/);
    // The aerosol paper with one word of it is raised by its community to a close match; tied on
    // impact (none), the titles with every word still come first.
    expect(now[3]!.title).toBe('Aerosol optical depth');
    expect(now[3]!.reason).toMatch(/^a close title match .*raised as it is in a leading community/);
  });

  it('newest: the newest of the close matches first', () => {
    const newest = ask('aerosol formation').lists.newest!;
    expect(newest.slice(0, 3).every((p) => /aerosol/i.test(p.title ?? ''))).toBe(true);
    expect(newest[0]!.reason).toMatch(/^its title has every word of the question; published /);
  });
});

describe('subjects search by how much of the question a subject covers', () => {
  it('ranks the subject holding more of the question first, though another names one word', () => {
    const topics = searchSubjects(snapshot, 'aerosol formation kinetics', viewer).results.filter(
      (r) => r.subject_type === 'topic',
    );
    expect(topics[0]!.subject_id).toBe(`T${AEROSOL}`);
    expect(topics[0]!.match).toMatch(/holds \d+% of the question/);
    expect(topics.map((t) => t.subject_id)).toContain(`T${BIG}`);
  });

  it('finds a topic by its taxonomy keywords', () => {
    const topics = searchSubjects(snapshot, 'nanoindentation', viewer).results.filter(
      (r) => r.subject_type === 'topic',
    );
    expect(topics[0]!.subject_id).toBe(`T${INDENT}`);
  });
});

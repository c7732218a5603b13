import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
 * The subjects search's rule, pinned on a hand-built corpus: a subject whose name is the question
 * comes first; the rest by how well the question fits them, their texts' share of it and, for a
 * topic, its share by the titles' topic model. A shortened title rarely names its topic, but its
 * words are that topic's titles' words.
 */

const LDH = 30001;
const OER = 30002;
const BATTERY = 30003;

const TAXONOMY = [
  [
    LDH,
    'Layered Double Hydroxide Catalysts',
    'Anion exchange clays as catalysts of oxygen evolution.',
    ['Hydrotalcite'],
  ],
  [OER, 'Oxygen Evolution', 'The anodic half reaction of water electrolysis.', ['Water Oxidation']],
  [BATTERY, 'Lithium Battery Cathodes', 'Cathode materials for rechargeable cells.', ['Cathodes']],
].map(([id, name, description, keywords]) => ({
  id: `https://openalex.org/T${id}`,
  display_name: name,
  description,
  keywords,
  subfield: { id: 'https://openalex.org/subfields/1601', display_name: 'Sub' },
  field: { id: 'https://openalex.org/fields/16', display_name: 'Field 16' },
  domain: { id: 'https://openalex.org/domains/3', display_name: 'Physical Sciences' },
}));

const inTopic = (id: number, name: string) => ({
  primary_topic: topic(id, name, 0.99),
  topics: [topic(id, name, 0.99)],
});
const keyword = (name: string) => ({
  keywords: [
    {
      id: `https://openalex.org/keywords/${name.toLowerCase().replace(/ /g, '-')}`,
      display_name: name,
      score: 0.7,
    },
  ],
});

/**
 * Twelve titles of the hydroxide topic on exfoliated nanosheets for oxygen evolution (their
 * keyword: 'Oxygen evolution'); two of the topic named 'Oxygen Evolution', in other words; six on
 * battery cathodes. No subject's name or description holds 'exfoliated' or 'nanosheets'.
 */
const WORKS = [
  ...Array.from({ length: 12 }, (_, i) =>
    work(1000 + i, {
      title: `Exfoliated NiFe nanosheets for oxygen evolution ${i}`,
      ...inTopic(LDH, 'Layered Double Hydroxide Catalysts'),
      ...keyword('Oxygen evolution'),
    }),
  ),
  ...['Anodic currents in water splitting', 'Iridium anodes in acid'].map((title, i) =>
    work(2000 + i, { title, ...inTopic(OER, 'Oxygen Evolution') }),
  ),
  ...Array.from({ length: 6 }, (_, i) =>
    work(3000 + i, {
      title: `Cycling of layered lithium cathodes ${i}`,
      ...inTopic(BATTERY, 'Lithium Battery Cathodes'),
    }),
  ),
];

let snapshot: Snapshot;
beforeAll(async () => {
  const dir = tempDir('ri-subjects-search-');
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
const search = (q: string) => searchSubjects(snapshot, q, viewer).results;

describe('subjects search by how well the question fits a subject', () => {
  it('finds the topic of a shortened title by its titles, though no subject text names its words', () => {
    const results = search('exfoliated nanosheets');
    expect(results[0]).toMatchObject({ subject_type: 'topic', subject_id: `T${LDH}` });
    expect(results[0]!.match).toBe(
      "titles on this topic use the question's words more than the corpus's titles do (100% of the question by the titles' topic model)",
    );
    expect(results[0]!.canonical_url).toBe(`https://ri.example/subjects/topic/T${LDH}`);
    expect(results[0]!.paper_count).toBe(12);
  });

  it('puts the subjects named as the question first, before a topic that fits it better by its texts and titles', () => {
    const results = search('oxygen evolution');
    // The hydroxide topic's description holds both words and its titles use them: it fits best,
    // yet the topic and the keyword named so come first.
    expect(results.slice(0, 2).map((r) => [r.subject_type, r.subject_id])).toEqual(
      expect.arrayContaining([
        ['topic', `T${OER}`],
        ['keyword', 'oxygen-evolution'],
      ]),
    );
    expect(results.slice(0, 2).map((r) => r.match)).toEqual(['exact name', 'exact name']);
    expect(results[2]).toMatchObject({ subject_type: 'topic', subject_id: `T${LDH}` });
    expect(results[2]!.match).toMatch(
      /^description matches every word; titles on this topic use the question's words more than the corpus's titles do/,
    );
    const keyword = results.find((r) => r.subject_type === 'keyword')!;
    // A keyword has no topic model: its match says its text alone.
    expect(keyword.match).not.toMatch(/topic model/);
  });

  it('adds the topic model to a topic found by its texts: the one whose titles use the words leads', () => {
    // 'layered' is in the hydroxide topic's name and in the battery topic's titles.
    const topics = search('layered cathodes').filter((r) => r.subject_type === 'topic');
    expect(topics[0]!.subject_id).toBe(`T${BATTERY}`);
    expect(topics[0]!.match).toMatch(
      /holds \d+% of the question.*; titles on this topic use the question's words/,
    );
    expect(topics.map((t) => t.subject_id)).toContain(`T${LDH}`);
  });

  it('answers the same for the same question, and nothing for words no text or title holds', () => {
    expect(search('exfoliated nanosheets')).toEqual(search('exfoliated nanosheets'));
    expect(search('zzqxv')).toEqual([]);
  });
});

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { buildTopicTerms } from '../../../src/snapshot-build/topic-terms.js';

/** The topic model built over these titles (by ordinal, each in the community `clusters` gives). */
function build(titles: (string | null)[], clusters: number[], batches?: { titles: number; words: number }) {
  const db = new Database(':memory:');
  try {
    db.exec('CREATE TABLE papers (ordinal INTEGER PRIMARY KEY, title TEXT)');
    const insert = db.prepare('INSERT INTO papers VALUES (?, ?)');
    for (const [ordinal, title] of titles.entries()) insert.run(ordinal, title);
    let read = 0;
    buildTopicTerms(
      db,
      { clusters: Int32Array.from(clusters), texts: [{ topic: 7, text: 'Iron catalysts' }] },
      () => read++,
      batches,
    );
    return {
      read,
      terms: db.prepare('SELECT * FROM topic_terms ORDER BY term').raw().all(),
      lengths: db.prepare('SELECT * FROM topic_lengths ORDER BY topic').raw().all(),
    };
  } finally {
    db.close();
  }
}

const TITLES = [
  'Iron oxide catalysts',
  'Nickel iron hydroxide',
  null,
  'iron oxide films',
  'Copper catalysts',
];
const CLUSTERS = [7, 9, -1, 7, 9];

describe("the titles' topic model", () => {
  it('is the same whether the titles are read as one string or row by row, and says once that they are read', () => {
    // As one string (ordinals 0..n-1, no line break in a title).
    const whole = build(TITLES, CLUSTERS);
    // Row by row: a title holding a line break (a word separator, as a space is).
    const byRow = build(
      TITLES.map((t, i) => (i === 1 ? 'Nickel iron\nhydroxide' : t)),
      CLUSTERS,
    );
    expect(whole.terms.length).toBeGreaterThan(0);
    expect(byRow).toEqual(whole);
    expect(whole.read).toBe(1);
    expect(byRow.read).toBe(1);
    // The iron titles of community 7 and 9 both count (iron is in 3 titles and 7's texts).
    expect(whole.lengths).toEqual([
      [7, 2, expect.any(Number)],
      [9, 2, expect.any(Number)],
    ]);
  });
});

describe("the titles' topic model, counted a batch at a time", () => {
  // Titles of 1-6 words from a small vocabulary (plural and singular forms share a stem), each in
  // one of five communities or none: every word recurs across batches and communities.
  const vocabulary = [
    'iron',
    'irons',
    'oxide',
    'oxides',
    'catalyst',
    'catalysts',
    'nickel',
    'films',
    'film',
    'lithium',
    'battery',
    'batteries',
    'of',
    'the',
    'x-ray',
    'co2',
    'über',
    'zeolite',
  ];
  let seed = 7;
  const random = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  const titles = Array.from({ length: 400 }, () =>
    Array.from({ length: 1 + random(6) }, () => vocabulary[random(vocabulary.length)]).join(' '),
  );
  const clusters = titles.map(() => (random(6) === 0 ? -1 : 7 + random(5)));

  it('gives the same model whatever the batches', () => {
    const whole = build(titles, clusters);
    expect(whole.terms.length).toBeGreaterThan(5);
    // Three titles a string and at most 10 words waiting: about 100 batches, new words in many.
    expect(build(titles, clusters, { titles: 3, words: 10 })).toEqual(whole);
    expect(build(titles, clusters, { titles: 1000, words: 1 })).toEqual(whole);
  });

  it("counts each community's titles holding a term once a title", () => {
    const { terms } = build(titles, clusters, { titles: 5, words: 7 });
    const row = (terms as [string, number, Buffer][]).find(([term]) => term === 'iron');
    expect(row).toBeDefined();
    // By hand: the titles holding "iron" or "irons" (one stem), per community; 7's texts add 3.
    const expected = new Map<number, number>();
    titles.forEach((t, i) => {
      const c = clusters[i]!;
      if (c >= 0 && t.split(' ').some((w) => w === 'iron' || w === 'irons'))
        expected.set(c, (expected.get(c) ?? 0) + 1);
    });
    expected.set(7, (expected.get(7) ?? 0) + 3);
    const blob = new Int32Array(new Uint8Array(row![2]).buffer);
    const got = new Map<number, number>();
    for (let i = 0; i < blob.length; i += 2) got.set(blob[i]!, blob[i + 1]!);
    expect(got).toEqual(expected);
    expect(row![1]).toBe([...expected.values()].reduce((a, b) => a + b, 0));
  });
});

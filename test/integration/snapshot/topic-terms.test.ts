import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { buildTopicTerms } from '../../../src/snapshot-build/topic-terms.js';

/** The topic model built over these titles (by ordinal, each in the community `clusters` gives). */
function build(titles: (string | null)[], clusters: number[]) {
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

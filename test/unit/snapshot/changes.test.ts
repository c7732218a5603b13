import { describe, expect, it } from 'vitest';
import { diffSubjects, ranksByRis, type SubjectState } from '../../../src/snapshot-build/changes.js';

/**
 * The comparison a publish records (snapshot-build/changes.ts), on a pinned example worked by
 * hand: two snapshots of three elements, two topics and a keyword.
 */
const s = (
  type: SubjectState['type'],
  id: string,
  ri: number,
  ris: number,
  hri: number | null,
  rising: boolean | null = type === 'topic' ? false : null,
): SubjectState => ({ type, id, name: `${type} ${id}`, ri, ris, hri, rising });

const BEFORE = [
  s('element', 'Fe', 10, 80, 12),
  s('element', 'Ni', 8, 90, 9),
  s('element', 'Co', 2, 40, null),
  s('topic', 'T1', 5, 100, 6, false),
  s('topic', 'T2', 3, 70, 3, true),
  s('keyword', 'gone-keyword', 1, 20, 1),
];
const AFTER = [
  // Fe rises past Ni: RI, RIS, HRI and rank all move.
  s('element', 'Fe', 11, 95, 13),
  // Ni's numbers stay, but Fe passes it: rank 1 -> 2.
  s('element', 'Ni', 8, 90, 9),
  // Co: nothing moved (rank 3 before and after).
  s('element', 'Co', 2, 40, null),
  // T1: only its community turns rising.
  s('topic', 'T1', 5, 100, 6, true),
  // T2: no longer rising, RIS down.
  s('topic', 'T2', 3, 60, 3, false),
  // A topic new to the corpus, between T1 and T2.
  s('topic', 'T3', 4, 65, null, false),
];

describe('ranksByRis', () => {
  it('ranks within each kind by RIS, equal RIS sharing a rank', () => {
    const ranks = ranksByRis([...BEFORE, s('element', 'Mn', 1, 80, null)]);
    expect(ranks.get('element\u0000Ni')).toBe(1);
    expect(ranks.get('element\u0000Fe')).toBe(2);
    expect(ranks.get('element\u0000Mn')).toBe(2);
    expect(ranks.get('element\u0000Co')).toBe(4);
    expect(ranks.get('topic\u0000T1')).toBe(1);
    expect(ranks.get('keyword\u0000gone-keyword')).toBe(1);
  });
});

describe('diffSubjects', () => {
  it('records what moved, a community turning rising or not, a subject new or gone, in key order', () => {
    expect(diffSubjects(BEFORE, AFTER)).toEqual([
      {
        type: 'element',
        id: 'Fe',
        name: 'element Fe',
        before: { ri: 10, ris: 80, hri: 12, rank: 2, rising: null },
        after: { ri: 11, ris: 95, hri: 13, rank: 1, rising: null },
      },
      {
        type: 'element',
        id: 'Ni',
        name: 'element Ni',
        before: { ri: 8, ris: 90, hri: 9, rank: 1, rising: null },
        after: { ri: 8, ris: 90, hri: 9, rank: 2, rising: null },
      },
      {
        type: 'keyword',
        id: 'gone-keyword',
        name: 'keyword gone-keyword',
        before: { ri: 1, ris: 20, hri: 1, rank: 1, rising: null },
        after: null,
      },
      {
        type: 'topic',
        id: 'T1',
        name: 'topic T1',
        before: { ri: 5, ris: 100, hri: 6, rank: 1, rising: false },
        after: { ri: 5, ris: 100, hri: 6, rank: 1, rising: true },
      },
      {
        type: 'topic',
        id: 'T2',
        name: 'topic T2',
        before: { ri: 3, ris: 70, hri: 3, rank: 2, rising: true },
        after: { ri: 3, ris: 60, hri: 3, rank: 3, rising: false },
      },
      {
        type: 'topic',
        id: 'T3',
        name: 'topic T3',
        before: null,
        after: { ri: 4, ris: 65, hri: null, rank: 2, rising: false },
      },
    ]);
  });

  it('finds nothing between a snapshot and itself', () => {
    expect(diffSubjects(AFTER, AFTER)).toEqual([]);
    expect(diffSubjects([], [])).toEqual([]);
  });

  it('counts an HRI turning null as a move', () => {
    const moved = diffSubjects([s('element', 'Fe', 1, 1, 2)], [s('element', 'Fe', 1, 1, null)]);
    expect(moved).toHaveLength(1);
    expect(moved[0]!.after!.hri).toBeNull();
  });
});

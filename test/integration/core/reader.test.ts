import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { getElement, listElements } from '../../../src/core/elements.js';
import { elementHistory, subjectHistory } from '../../../src/core/history.js';
import { labQuote, labRun } from '../../../src/core/lab.js';
import { elementPapers, subjectPapers } from '../../../src/core/papers.js';
import { LENSES, research } from '../../../src/core/research.js';
import { getSubject, searchSubjects, subjectElements } from '../../../src/core/subjects.js';
import { labIndex } from '../../../src/lab/lab-index.js';
import { verifyQuote } from '../../../src/lab/quote-signature.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { Snapshot } from '../../../src/snapshot/snapshot.js';
import { sampleDataDir } from '../../helpers/sample.js';

let snapshot: Snapshot;
beforeAll(async () => {
  const sample = await sampleDataDir();
  snapshot = new Snapshot(sample.version, snapshotFile(sample.snapshots, sample.version));
});
afterAll(() => snapshot.retire());

const viewer = { hriAvailable: true, publicUrl: 'https://ri.example' };
const settings = {
  secret: 'test-secret-0123456789',
  ttlSeconds: 900,
  now: () => new Date('2026-11-23T12:00:00Z'),
};

/** Every kind of answer the core gives, each read of the snapshot made at least once. */
function everyAnswer(s: Snapshot): void {
  listElements(s, viewer);
  getElement(s, 'Fe', viewer);
  elementHistory(s, 'Fe', 'monthly', viewer);
  elementPapers(s, 'Ni', { sort: 'newest', limit: 20 }, viewer);
  const topic = searchSubjects(s, 'electrocatalysts', viewer).results.find(
    (r) => r.subject_type === 'topic',
  )!;
  getSubject(s, 'topic', topic.subject_id, viewer);
  subjectElements(s, 'topic', topic.subject_id, viewer);
  subjectHistory(s, 'topic', topic.subject_id, 'yearly', viewer);
  subjectPapers(s, 'topic', topic.subject_id, { sort: 'impact', limit: 10 }, viewer);
  expect(() => getSubject(s, 'keyword', 'no-such-keyword-at-all', viewer)).toThrow();
  for (const q of ['oxygen evolution nickel', 'HER MoS2', 'zzqxv catalysis'])
    research(s, { q, pageSize: 10, lenses: [...LENSES], page: 1 }, viewer);
  const quote = labQuote(s, 'Fe O', viewer, settings);
  labRun(s, quote, 'papers_20', viewer);
}

describe('the snapshot reader', () => {
  it('prepares each statement once per snapshot: answering again prepares nothing', () => {
    everyAnswer(snapshot);
    const prepare = vi.spyOn(snapshot.db, 'prepare');
    try {
      everyAnswer(snapshot);
      everyAnswer(snapshot);
      expect(prepare).not.toHaveBeenCalled();
    } finally {
      prepare.mockRestore();
    }
  });

  it('reads the meta table into the snapshot', () => {
    expect(snapshot.meta).toEqual(snapshot.reader.meta());
    expect(snapshot.meta.cutoff_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});

describe("the reader's research facts", () => {
  it('reads a word count, a topic match and a community once per snapshot, with the same answer', () => {
    const fresh = new Snapshot(snapshot.version, snapshot.path);
    const facts = (s: Snapshot) => [
      s.reader.countTitleMatches('"oxygen"', 20_001),
      s.reader.countTitleMatches('"oxygen"', 1),
      s.reader.hasTopicMatch('"oxygen"'),
      s.reader.countTitleMatches('"zzqxv"', 1),
      s.reader.community(s.reader.describedTopics('"oxygen"')[0]!),
      s.reader.elementCommunity('O', s.reader.describedTopics('"oxygen"')[0]!),
    ];
    try {
      const first = facts(fresh);
      expect(first[0]).toBeGreaterThan(0);
      expect(first.slice(1, 4)).toEqual([1, true, 0]);
      expect(first[4]).toBeDefined();
      // Asked again: the same answers, and no statement reads a row but describedTopics.
      const get = vi.spyOn(Object.getPrototypeOf(fresh.db.prepare('SELECT 1')), 'get');
      try {
        expect(facts(fresh)).toEqual(first);
        expect(get).not.toHaveBeenCalled();
      } finally {
        get.mockRestore();
      }
    } finally {
      fresh.retire();
    }
  });
});

const quoteSecret = 'test-secret-0123456789';
const at = (iso: string) => ({ secret: quoteSecret, ttlSeconds: 900, now: () => new Date(iso) });

/**
 * A quote asked again on the same snapshot is made from what the first one computed (its matches,
 * spread and broader queries): the same numbers, a new issue time and signature, no set algebra.
 */
describe('lab quotes asked again', () => {
  it('carry the same numbers, their own times and a valid signature, without matching again', () => {
    const viewer = { hriAvailable: true, publicUrl: 'https://ri.example' };
    // A narrow query (broader queries tried) and a wide one (a sampled spread).
    for (const input of ['Fe Pt Ru', 'O']) {
      const first = labQuote(snapshot, input, viewer, at('2026-11-23T12:00:00Z'));
      const postings = vi.spyOn(labIndex(snapshot), 'postings');
      try {
        const again = labQuote(snapshot, input, viewer, at('2026-11-23T12:05:00Z'));
        expect(postings).not.toHaveBeenCalled();
        const { issued_at, expires_at, signature, ...rest } = again;
        const { issued_at: i0, expires_at: e0, signature: s0, ...rest0 } = first;
        expect(rest).toEqual(rest0);
        expect(issued_at).toBe('2026-11-23T12:05:00.000Z');
        expect(i0).toBe('2026-11-23T12:00:00.000Z');
        expect(signature).not.toBe(s0);
        expect(verifyQuote(again as unknown as Record<string, unknown>, quoteSecret)).toBe(true);
      } finally {
        postings.mockRestore();
      }
    }
  });

  it('give each viewer its own links', () => {
    const a = labQuote(
      snapshot,
      'Fe O',
      { hriAvailable: true, publicUrl: 'https://a.example' },
      at('2026-11-23T12:00:00Z'),
    );
    const b = labQuote(
      snapshot,
      'Fe O',
      { hriAvailable: true, publicUrl: 'https://b.example' },
      at('2026-11-23T12:00:00Z'),
    );
    expect(a.canonical_url).toMatch(/^https:\/\/a\.example\//);
    expect(b.canonical_url).toMatch(/^https:\/\/b\.example\//);
    expect(a.matches).toBe(b.matches);
  });
});

import { describe, expect, it } from 'vitest';
import { LAB_LICENCE_ABOVE } from '../../src/access/policy.js';
import { ServiceError } from '../../src/core/errors.js';
import { checkQuote, labQuote } from '../../src/core/lab.js';
import type { LabIndex } from '../../src/lab/lab-index.js';
import type { Snapshot } from '../../src/snapshot/snapshot.js';

/**
 * Above 100,000 matches the packet is a licence offer, not a price. The bundled sample has
 * 21,079 works, so this runs the core on an index of 150,000 papers made here.
 */
function bigSnapshot(papers: number): Snapshot {
  const all = Int32Array.from({ length: papers }, (_, i) => i);
  const index: LabIndex = {
    papers,
    // Ordinals are in publication-date order: years come in blocks.
    year: Int16Array.from({ length: papers }, (_, i) => 2000 + Math.floor((i * 25) / papers)),
    cluster: Int32Array.from({ length: papers }, (_, i) => 10000 + (i % 7)),
    rankPosition: Int32Array.from({ length: papers }, (_, i) => papers - 1 - i),
    recency: new Float64Array(papers).fill(0.5),
    byName: new Map(),
    topics: [],
    topicName: (t) => `Topic ${t}`,
    postings: (ref) => (ref.type === 'element' && ref.id === 'C' ? all : all.subarray(0, 10)),
  };
  return {
    version: 'v-test',
    meta: { cutoff_date: '2026-01-01', corpus_papers: String(papers) },
    memoize: <T>(_key: string, _compute: () => T) => index as unknown as T,
  } as unknown as Snapshot;
}

const viewer = { hriAvailable: true, publicUrl: 'https://ri.example' };
const settings = {
  secret: 'test-secret-0123456789',
  ttlSeconds: 900,
  now: () => new Date('2026-11-23T12:00:00Z'),
};

describe('lab quote above the licence threshold', () => {
  it('offers a licence instead of prices, and a run refuses it with 403 licence_required', () => {
    const snapshot = bigSnapshot(150_000);
    const quote = labQuote(snapshot, 'C', viewer, settings);
    expect(quote.matches).toBe(150_000);
    expect(quote.matches).toBeGreaterThan(LAB_LICENCE_ABOVE);
    expect(quote.deliverables).toEqual({});
    expect(quote.licence).toMatchObject({ contact_url: 'https://ri.example/pricing#licence' });
    expect(quote.sample).toEqual({ used: true, size: 2000 });
    expect(quote.years).toHaveLength(25);
    let refused: unknown;
    try {
      checkQuote(snapshot, quote as unknown as Record<string, unknown>, 'papers_20', settings);
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(ServiceError);
    expect(refused).toMatchObject({ code: 'licence_required', status: 403 });
  });

  it('prices the packet at exactly 100,000 matches', () => {
    const snapshot = bigSnapshot(LAB_LICENCE_ABOVE);
    const quote = labQuote(snapshot, 'C', viewer, settings);
    expect(quote.licence).toBeNull();
    expect(Object.keys(quote.deliverables)).toEqual(['papers_20', 'papers_100']);
  });
});

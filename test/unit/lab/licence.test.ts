import { describe, expect, it } from 'vitest';
import { LAB_LICENCE_ABOVE } from '../../../src/access/policy.js';
import { ServiceError } from '../../../src/core/errors.js';
import { checkQuote, labQuote } from '../../../src/core/lab.js';
import type { LabQueries, PaperQueries, SnapshotView } from '../../../src/snapshot/reader.js';

/** A typed array's bytes, as the snapshot stores a column or a posting list. */
const bytes = (a: Int16Array | Int32Array | Float64Array) =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/**
 * Above 100,000 matches the packet is a licence offer, not a price. The bundled sample has
 * 21,079 works, so this runs the core on a snapshot of 150,000 papers made here: a plain object
 * answering the lab's queries.
 */
function bigSnapshot(papers: number): SnapshotView<LabQueries & PaperQueries> {
  const all = bytes(Int32Array.from({ length: papers }, (_, i) => i));
  const columns: Record<string, Buffer> = {
    // Ordinals are in publication-date order: years come in blocks.
    year: bytes(Int16Array.from({ length: papers }, (_, i) => 2000 + Math.floor((i * 25) / papers))),
    cluster: bytes(Int32Array.from({ length: papers }, (_, i) => 10000 + (i % 7))),
    rank_position: bytes(Int32Array.from({ length: papers }, (_, i) => papers - 1 - i)),
    recency: bytes(new Float64Array(papers).fill(0.5)),
  };
  return {
    version: 'v-test',
    meta: { cutoff_date: '2026-01-01', corpus_papers: String(papers) },
    reader: {
      hasLabTables: () => true,
      paperColumn: (name) => columns[name],
      labSubjects: () => [],
      postings: (type, id) => (type === 'element' && id === 'C' ? all : all.subarray(0, 40)),
      paperRows: () => [],
      rankedPapers: () => undefined,
      topicName: () => undefined,
    },
    memoize: (_key, compute) => compute(),
  };
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
    expect(quote.not_offered.map((n) => [n.depth, n.reason])).toEqual([
      ['papers_20', 'above 100000 matches: see licence'],
      ['papers_100', 'above 100000 matches: see licence'],
    ]);
    expect(quote.licence).toMatchObject({ contact_url: 'https://ri.example/pricing#licence' });
    expect(quote.sample).toEqual({ used: true, size: 2000 });
    expect(quote.years).toHaveLength(25);
    let refused: unknown;
    try {
      checkQuote(snapshot, { ...quote }, 'papers_20', settings);
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
    expect(quote.not_offered).toEqual([]);
  });
});

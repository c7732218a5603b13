import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { labQuote } from '../../src/core/lab.js';
import { labIndex } from '../../src/lab/lab-index.js';
import { verifyQuote } from '../../src/lab/quote-signature.js';
import { snapshotFile } from '../../src/snapshot/publish.js';
import { Snapshot } from '../../src/snapshot/snapshot.js';
import { sampleDataDir } from '../helpers/sample.js';

/**
 * A quote asked again on the same snapshot is made from what the first one computed (its matches,
 * spread and broader queries): the same numbers, a new issue time and signature, no set algebra.
 */
let snapshot: Snapshot;
beforeAll(async () => {
  const sample = await sampleDataDir();
  snapshot = new Snapshot(sample.version, snapshotFile(sample.snapshots, sample.version));
});
afterAll(() => snapshot.retire());

const secret = 'test-secret-0123456789';
const at = (iso: string) => ({ secret, ttlSeconds: 900, now: () => new Date(iso) });

describe('quotes asked again', () => {
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
        expect(verifyQuote(again as unknown as Record<string, unknown>, secret)).toBe(true);
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

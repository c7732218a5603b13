import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rankedPapers } from '../../../src/core/papers.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { Snapshot } from '../../../src/snapshot/snapshot.js';
import { sampleDataDir } from '../../helpers/sample.js';

let snapshot: Snapshot;
beforeAll(async () => {
  const sample = await sampleDataDir();
  snapshot = new Snapshot(sample.version, snapshotFile(sample.snapshots, sample.version));
});
afterAll(() => snapshot.retire());

describe('ranked papers of the real sample', () => {
  it('gives at most 100 papers for iron with every field of the spec, rank 1 first', () => {
    const r = rankedPapers(snapshot, 'element', 'Fe')!;
    expect(r.totalRanked).toBe(100);
    expect(r.totalPapers).toBeGreaterThan(100);
    expect(r.papers).toHaveLength(100);
    expect(r.papers.map((p) => p.rank)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    for (const key of [
      'title',
      'doi',
      'venue',
      'year',
      'citations',
      'link',
      'impact_score',
      'citation_percentile',
      'cluster',
      'rank',
      'ris_contribution',
    ]) {
      expect(r.papers[0]).toHaveProperty(key);
    }
    expect(r.papers.every((p) => p.elements.includes('Fe'))).toBe(true);
    expect(r.papers[0]!.link).toMatch(/^https:\/\/(doi|openalex)\.org\//);
    // Every paper joins back to OpenAlex by its work id, a DOI or not.
    for (const p of r.papers) expect(p.openalex_id).toMatch(/^W\d+$/);
    const doiless = r.papers.find((p) => p.doi === null);
    if (doiless) expect(doiless.link).toBe(`https://openalex.org/${doiless.openalex_id}`);
  });

  it('never ranks a paper with unknown citations above one with known citations', () => {
    // Iron papers come from both files: the geoscience works have citations, the chemistry ones do not.
    const r = rankedPapers(snapshot, 'element', 'Ni')!;
    const firstUnknown = r.papers.findIndex((p) => p.citations === null);
    const lastKnown = r.papers.map((p) => p.citations !== null).lastIndexOf(true);
    expect(lastKnown).toBeGreaterThanOrEqual(0);
    if (firstUnknown !== -1) expect(lastKnown).toBeLessThan(firstUnknown);
    const known = r.papers.filter((p) => p.citations !== null);
    for (let i = 1; i < known.length; i++)
      expect(known[i - 1]!.impact_score!).toBeGreaterThanOrEqual(known[i]!.impact_score!);
  });

  it('names the cluster of a paper with a topic, and finds none for an unknown subject', () => {
    const topic = rankedPapers(snapshot, 'topic', 'T10030')!;
    expect(topic.papers.length).toBeGreaterThan(0);
    expect(
      topic.papers.some(
        (p) => p.cluster === 'T10030' && p.cluster_name === 'Electrocatalysts for Energy Conversion',
      ),
    ).toBe(true);
    expect(rankedPapers(snapshot, 'topic', 'T0')).toBeNull();
  });
});

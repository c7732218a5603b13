import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import type { ElementAnswer, ElementListAnswer } from '../../../src/core/elements.js';
import { createApp } from '../../../src/http/app.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { emptyState } from '../../helpers/app.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

const config = loadConfig({}, { PUBLIC_URL: 'https://ri.example' });
let snapshots: SnapshotManager;
let app: ReturnType<typeof createApp>;
let version: string;

beforeAll(async () => {
  const sample = await sampleDataDir();
  version = sample.version;
  snapshots = new SnapshotManager(sample.snapshots);
  await snapshots.start();
  app = createApp({
    config: { ...config, publicUrl: 'https://ri.example' },
    snapshots,
    state: await emptyState(),
  });
});
afterAll(() => snapshots.stop());

describe('GET /v1/elements', () => {
  it('lists the 118 elements with scores from the real sample, no key needed', async () => {
    const res = await app.request('/v1/elements');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    const body = (await res.json()) as ElementListAnswer;
    expect(body.count).toBe(118);
    expect(body.elements).toHaveLength(118);
    expect(body.elements[0]).toMatchObject({
      symbol: 'H',
      name: 'Hydrogen',
      atomic_number: 1,
      group: 1,
      period: 1,
    });
    expect(body.data_version).toBe(version);
    expect(body.canonical_url).toBe('https://ri.example/elements');
    expect(body.notes.ri).toMatch(/per 10,000/);
    const oxygen = body.elements.find((e) => e.symbol === 'O')!;
    expect(oxygen.paper_count).toBeGreaterThan(1000);
    expect(oxygen.ris).toBe(100);
    // No key: HRI null for every element, and the note says where to get it.
    expect(body.elements.every((e) => e.hri === null)).toBe(true);
    expect(body.notes.hri).toMatch(/Personal plan/);
  });
});

describe('GET /v1/elements/{symbol}', () => {
  it.each(['fe', 'FE', 'Fe'])(
    'matches %s case-insensitively and answers with the canonical symbol',
    async (s) => {
      const res = await app.request(`/v1/elements/${s}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as ElementAnswer;
      expect(body).toMatchObject({
        symbol: 'Fe',
        name: 'Iron',
        atomic_number: 26,
        group: 8,
        period: 4,
        hri: null,
      });
      expect(body.canonical_url).toBe('https://ri.example/elements/Fe');
      expect(body.data_version).toBe(version);
      expect(body.ri).toBeGreaterThan(0);
      expect(Object.keys(body.notes).sort()).toEqual(['cite', 'data', 'hri', 'ri', 'ris']);
    },
  );

  it('answers an unknown symbol with a 404 problem and suggestions', async () => {
    const res = await app.request('/v1/elements/Xx', { headers: { 'x-request-id': 'req-123' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      status: 404,
      code: 'unknown_symbol',
      title: 'Unknown element symbol',
      request_id: 'req-123',
    });
    expect(body.type).toMatch(/unknown_symbol$/);
    expect(body.detail).toMatch(/Xx/);
    const iron = (await (await app.request('/v1/elements/iron')).json()) as { suggestions: string[] };
    expect(iron.suggestions).toEqual(['Fe']);
  });

  it('answers an unknown path with a JSON problem, not HTML', async () => {
    const res = await app.request('/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(((await res.json()) as { code: string }).code).toBe('not_found');
  });
});

describe('without a snapshot', () => {
  it('answers 503 data_unavailable and is not ready', async () => {
    const empty = join(tempDir(), 'snapshots');
    mkdirSync(empty);
    const none = new SnapshotManager(empty);
    await none.start();
    const bare = createApp({ config, snapshots: none, state: await emptyState() });
    const res = await bare.request('/v1/elements');
    expect(res.status).toBe(503);
    expect(((await res.json()) as { code: string }).code).toBe('data_unavailable');
    expect((await bare.request('/readyz')).status).toBe(503);
    expect((await app.request('/readyz')).status).toBe(200);
    none.stop();
  });
});

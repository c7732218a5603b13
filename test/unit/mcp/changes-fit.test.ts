import { describe, expect, it } from 'vitest';
import type { Viewer } from '../../../src/core/viewer.js';
import { toolDefinitions } from '../../../src/mcp/tools.js';

/**
 * get_changes held to a result's size names the REST URL of the whole answer: the route the
 * call's arguments chose (the list, one element's, one subject's), pinned to its data version,
 * and only the parameters that route takes to narrow it.
 */
describe('get_changes over its size', () => {
  const tool = toolDefinitions().find((t) => t.name === 'get_changes')!;
  const viewer = { publicUrl: 'https://ri.example' } as Viewer;
  const change = {
    subject_type: 'element',
    subject_id: 'Ni',
    name: 'Nickel',
    data_version: '0123456789abcdef',
    since: 'fedcba9876543210',
    change: 'moved',
    direction: 'up',
    move: 1.5,
    ri: { before: 10.25, after: 11.75 },
    ris: { before: 40.5, after: 42 },
    hri: { before: null, after: null },
    rank: { before: 3, after: 2 },
    rising: { before: null, after: null },
    canonical_url: 'https://ri.example/elements/Ni',
  };
  const answer = {
    since: null,
    publications: [],
    min_move: 0,
    direction: null,
    limit: 1000,
    total: 1000,
    changes: Array.from({ length: 1000 }, (_, i) => ({ ...change, move: i })),
    canonical_url: 'https://ri.example/elements/Ni',
    data_version: '0123456789abcdef',
    notes: {},
  };
  const one = { subject_type: 'element', subject_id: 'Ni', name: 'Nickel' };

  it.each([
    [
      { symbol: 'ni', min_move: 0, limit: 1000 },
      one,
      'since',
      '/v1/elements/ni/changes?min_move=0&limit=1000',
    ],
    [
      { subject_type: 'topic', subject_id: 'T10074', min_move: 0, limit: 1000 },
      one,
      'since',
      '/v1/subjects/topic/T10074/changes?min_move=0&limit=1000',
    ],
    [
      { kind: ['element', 'topic'], min_move: 0, limit: 1000 },
      { kind: ['element', 'topic'] },
      'kind',
      '/v1/changes?kind=element,topic&min_move=0&limit=1000',
    ],
  ])('%o: the first changes that fit, and the URL of the rest', (args, shape, narrow, path) => {
    const fitted = tool.fit!({ ...shape, ...answer }, args, viewer) as typeof answer & {
      notes: { left_out: string };
    };
    expect(fitted.changes.length).toBeGreaterThan(0);
    expect(fitted.changes.length).toBeLessThan(1000);
    expect(fitted.notes.left_out).toContain(`Narrow the call with ${narrow}, min_move or direction`);
    expect(fitted.notes.left_out).toContain(`https://ri.example${path}&data_version=0123456789abcdef.`);
  });
});

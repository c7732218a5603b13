/**
 * No import cycles between the files of src/: a module never needs, however indirectly, a module
 * that needs it. Type-only imports count (they are a dependency of the design, if not of the
 * running code). A worker file started by path does not: it runs in a thread of its own, with a
 * module graph of its own, so importing what started it closes no loop in either.
 */
import { describe, expect, it } from 'vitest';
import { cyclesOf, importGraph } from './imports.js';

describe('import cycles between files of src/', () => {
  it('has none', () => {
    expect(cyclesOf(importGraph({ workers: false }))).toEqual([]);
  });

  it('finds and names a cycle (the check sees one when there is one)', () => {
    const graph = new Map([
      ['a.ts', new Set(['b.ts'])],
      ['b.ts', new Set(['c.ts', 'd.ts'])],
      ['c.ts', new Set(['a.ts'])],
      ['d.ts', new Set<string>()],
      ['e.ts', new Set(['e.ts'])],
    ]);
    expect(cyclesOf(graph).sort()).toEqual(['a.ts -> b.ts -> c.ts -> a.ts', 'e.ts -> e.ts']);
  });
});
